"""`h2h` commands of the data layer: init, import, export, raters.

Mounted on the root command in ``annotate/cli.py``. Every command takes ``--db`` (a file path or
an SQLAlchemy URL; default ``$H2H_DB``, else ``./h2h.db``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

# The database layer (sqlalchemy, sqlmodel, alembic) is imported inside each command, so that
# `h2h --help` and the commands that do not need it start fast (issue 16).
from .errors import H2HError

__all__ = ["DbOption", "MAX_BOOTSTRAP", "check_bootstrap", "check_seed", "register",
           "import_app", "export_app", "raters_app", "pairs_app"]

out = Console(highlight=False, soft_wrap=True, markup=False)  # names and paths print as is
# Every --bootstrap stops here: 100,000 resamples put a percentile bound's Monte Carlo error
# far below its last printed digit; a larger B only runs longer (20 digits ran for ever).
MAX_BOOTSTRAP = 100_000


def check_seed(value: int) -> int:
    """Every --seed's check (a callback, not Click's ``min``: a range widens the help's type
    column and cuts the help texts beside it at 80 columns)."""
    if value < 0:
        raise typer.BadParameter("must be 0 or more")
    return value


def check_bootstrap(value: int) -> int:
    """Every --bootstrap's upper bound (each command says itself what 0 and below mean)."""
    if value > MAX_BOOTSTRAP:
        raise typer.BadParameter(f"at most {MAX_BOOTSTRAP:,} resamples")
    return value

DbOption = Annotated[str | None, typer.Option(
    "--db", help="Study database: a file path or SQLAlchemy URL. Default: $H2H_DB, else ./h2h.db.",
    show_default=False)]

import_app = typer.Typer(help="Import items, ratings or a new rubric version into the study.",
                         no_args_is_help=True)
export_app = typer.Typer(help="Export items (JSONL), ratings (long or wide CSV) or one "
                         "dimension's items x raters matrix, for R and pandas.",
                         no_args_is_help=True)
raters_app = typer.Typer(help="Manage raters and admins and their access codes.",
                         no_args_is_help=True)
pairs_app = typer.Typer(help="Pairs of replies to one scenario, compared side by side.",
                        no_args_is_help=True)


def init(
    db: DbOption = None,
    rubric: Annotated[Path | None, typer.Option(help="Rubric TOML (default: the bundled "
                                                     "companion rubric).")] = None,
    name: Annotated[str | None, typer.Option(help="Study name.")] = None,
    description: Annotated[str, typer.Option(help="Study description.")] = "",
) -> None:
    """Create a study database, or bring an existing one to the current schema.

    Existing data is never lost: an older study file is upgraded in place.

    Example: h2h init --db pilot.db --name "Pilot 2026" --rubric my_rubric.toml
    """
    from .engine import describe_url, get_engine, resolve_url
    from .study import init_study

    engine = get_engine(db)
    res = init_study(engine, name=name, description=description, rubric_path=rubric)
    where = describe_url(resolve_url(db))
    if res.created:
        out.print(f"Created study '{res.study}' in {where}")
    elif res.revision_before != res.revision_after:
        out.print(f"Upgraded study '{res.study}' in {where} from schema "
                  f"{res.revision_before} to {res.revision_after}; all data kept")
    else:
        out.print(f"Study '{res.study}' in {where} is up to date (schema {res.revision_after})")
    out.print(f"Rubric: {res.rubric} (version {res.rubric_version})")
    if res.created:
        from .rubric_languages import language_summary
        from .study import current_rubric

        out.print(language_summary(current_rubric(engine)))


MaxSizeOption = Annotated[str, typer.Option(
    "--max-size", help="The largest file to read (e.g. 2GB). Default: 1GB.")]
MaxLineOption = Annotated[str, typer.Option(
    "--max-line", help="The longest line to read (e.g. 64MB). Default: 16MB.")]


def _limits(max_size: str, max_line: str):
    from ._files import Limits, parse_size

    try:
        return Limits(parse_size(max_size), parse_size(max_line))
    except ValueError as exc:
        raise H2HError(f"--max-size/--max-line: {exc}") from None


@import_app.command("items")
def import_items(
    file: Annotated[Path, typer.Argument(help="Items as JSON Lines (.jsonl) or CSV (.csv).")],
    db: DbOption = None,
    update: Annotated[bool, typer.Option("--update", help="Replace items whose content "
                                         "changed under an existing id.")] = False,
    max_size: MaxSizeOption = "1GB",
    max_line: MaxLineOption = "16MB",
) -> None:
    """Import items; the whole file is rejected if any line is bad.

    The file is read one line at a time (memory stays flat whatever its size).

    Example: h2h import items responses.jsonl --db pilot.db
    """
    from .engine import get_engine
    from .importing import import_items_file

    limits = _limits(max_size, max_line)
    res = import_items_file(get_engine(db), file, update=update, limits=limits)
    out.print(f"Items from {file.name}: {res}")


@import_app.command("ratings")
def import_ratings(
    file: Annotated[Path, typer.Argument(help="Long CSV: item_id, rater, dimension, score"
                                              "[, comment].")],
    db: DbOption = None,
    update: Annotated[bool, typer.Option("--update", help="Replace ratings that differ from "
                                         "the stored ones (a revision is kept).")] = False,
    max_size: MaxSizeOption = "1GB",
    add_raters: Annotated[bool, typer.Option("--add-raters", help="Create the raters the "
                                             "study does not have yet (without an access "
                                             "code). Without it, an unknown rater name is an "
                                             "error: a typo must not become a new rater.")]
    = False,
) -> None:
    """Import ratings collected elsewhere. Every rater must be in the study already, unless
    --add-raters; the output says how many raters were added.

    Example: h2h import ratings pilot_ratings.csv --db pilot.db --add-raters
    """
    from .engine import get_engine
    from .importing import import_rating_records, item_tasks
    from .ratings import read_ratings
    from .study import current_rubric

    engine = get_engine(db)
    records = read_ratings(file, current_rubric(engine), item_tasks(engine),
                           limits=_limits(max_size, "16MB"))
    res = import_rating_records(engine, records, file=file.name, update=update,
                                add_raters=add_raters)
    out.print(f"Ratings from {file.name}: {res}")


@import_app.command("preferences")
def import_preferences(
    file: Annotated[Path, typer.Argument(help="CSV: item_a, item_b, rater, dimension, winner "
                                              "(a, b or tie)[, strength].")],
    db: DbOption = None,
    update: Annotated[bool, typer.Option("--update", help="Replace preferences that differ "
                                         "from the stored ones (a revision is kept).")] = False,
    add_raters: Annotated[bool, typer.Option("--add-raters", help="Create the raters the "
                                             "file names that the study does not have (without "
                                             "a code). Without it, an unknown rater name is an "
                                             "error: a typo must not become a new rater.")]
    = False,
) -> None:
    """Import side-by-side preferences collected elsewhere; the whole file is rejected if
    any line is bad. The two items of a row must answer the same scenario; pairs not in the
    study yet are added. A rater the study does not have is an error unless --add-raters;
    the output says how many raters were added.

    Example: h2h import preferences prefs.csv --db pilot.db --add-raters
    """
    from .engine import get_engine
    from .preferences import import_preference_records, read_preferences

    engine = get_engine(db)
    records = read_preferences(engine, file)
    res = import_preference_records(engine, records, file=file.name, update=update,
                                    add_raters=add_raters)
    out.print(f"Preferences from {file.name}: {res}")


@import_app.command("rubric")
def import_rubric(
    file: Annotated[Path, typer.Argument(help="Rubric TOML file.")],
    db: DbOption = None,
) -> None:
    """Make a rubric file the study's current rubric version (earlier ratings keep theirs).

    Example: h2h import rubric companion_v2.toml --db pilot.db
    """
    from .engine import get_engine
    from .rubric import load_rubric
    from .rubric_languages import language_summary
    from .study import set_rubric

    engine = get_engine(db)
    rub = load_rubric(file)
    version, changed = set_rubric(engine, rub, source=file.read_text("utf-8-sig"))
    if changed:
        out.print(f"Rubric '{rub.name}' version {version} is now current")
    else:
        out.print(f"Rubric '{rub.name}' version {version} was already current; nothing changed")
    out.print(language_summary(rub))


def _write(text: str, dest: Path | None, what: str, header: bool = True) -> None:
    from .outfiles import write_out_text

    if dest is None:
        sys.stdout.write(text)
        return
    write_out_text(dest, text)
    n = max(text.count("\n") - (1 if header else 0), 0)
    out.print(f"Wrote {n} {what} to {dest}")


@export_app.command("items")
def export_items_cmd(
    db: DbOption = None,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Output file "
                                                  "(default: standard output).")] = None,
) -> None:
    """Export every item as JSON Lines (re-importable).

    Example: h2h export items --db pilot.db --out items.jsonl
    """
    from .engine import get_engine
    from .importing import attention_copies, export_items
    from .outfiles import check_out_file

    if out_file is not None:
        check_out_file(out_file, example="items.jsonl")
    engine = get_engine(db)
    _write(export_items(engine), out_file, "items", header=False)
    n = len(attention_copies(engine))
    if n:  # on stderr: standard output may be the file itself
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"{n} attention-check copies left out (made by `h2h quality attention add` or "
            "`h2h pairs attention`; make them again in another study)")


@export_app.command("ratings")
def export_ratings_cmd(
    db: DbOption = None,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Output file "
                                                  "(default: standard output).")] = None,
    wide: Annotated[bool, typer.Option("--wide", help="One row per item and rater with a "
                                       "column per dimension, instead of one row per "
                                       "rating.")] = False,
) -> None:
    """Export every rating as CSV for R or pandas (long, or --wide).

    Each row carries the item's task, scenario, model and condition, the rubric version, the
    simulated flag and timestamps (admins only: raters never see model or condition). The
    long file re-imports unchanged. Columns: docs/formats.md.

    Example: h2h export ratings --db pilot.db --out ratings.csv
    """
    from .engine import get_engine
    from .exports import export_ratings_csv, export_wide_csv
    from .outfiles import check_out_file

    if out_file is not None:
        check_out_file(out_file, example="ratings.csv")
    engine = get_engine(db)
    if wide:
        _write(export_wide_csv(engine), out_file, "rows (item x rater)")
    else:
        _write(export_ratings_csv(engine), out_file, "ratings")


@export_app.command("matrix")
def export_matrix_cmd(
    dimension: Annotated[str, typer.Option("--dimension", "-d", help="The dimension's key, "
                                           "e.g. empathy.", show_default=False)],
    db: DbOption = None,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Output file "
                                                  "(default: standard output).")] = None,
) -> None:
    """Export one dimension as an items x raters matrix for irr and krippendorff.

    item_id, then a column per rater; empty = no score. irr::kripp.alpha and
    krippendorff.alpha want it transposed (raters x items).

    Example: h2h export matrix --dimension empathy --db pilot.db --out empathy.csv
    """
    from .engine import get_engine
    from .exports import export_matrix_csv
    from .outfiles import check_out_file

    if out_file is not None:
        check_out_file(out_file, example=f"{dimension}.csv")
    _write(export_matrix_csv(get_engine(db), dimension), out_file, "items")


@export_app.command("preferences")
def export_preferences_cmd(
    db: DbOption = None,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Output file "
                                                  "(default: standard output).")] = None,
) -> None:
    """Export every side-by-side preference as CSV (re-importable): the pair, both replies'
    models and conditions, the rater, dimension, winner (a, b, tie; empty: cannot compare),
    strength (2 much better, 1 better) and the side the rater saw on the left.

    Example: h2h export preferences --db pilot.db --out prefs.csv
    """
    from .engine import get_engine
    from .preferences import export_preferences_csv

    _write(export_preferences_csv(get_engine(db)), out_file, "preferences")


@pairs_app.command("make")
def pairs_make(
    db: DbOption = None,
    per_scenario: Annotated[int | None, typer.Option(
        "--per-scenario", help="Pairs per scenario (default: every pair the scenario's "
        "replies allow).")] = None,
    models: Annotated[str | None, typer.Option(help="Only replies of these models "
                                               "(comma-separated).")] = None,
    compare: Annotated[str, typer.Option(help="models: replies of two different models "
                                         "(of the same condition); conditions: one model's "
                                         "replies under two conditions (SAP and "
                                         "baseline).")] = "models",
    seed: Annotated[int, typer.Option(callback=check_seed, help="Seed of the design.")] = 0,
) -> None:
    """Build pairs of replies to the same scenario for side-by-side rating and pairwise
    judges. Balanced: comparable counts for every model pair, each model as often on the
    left as on the right. Running it again only adds (up to --per-scenario per scenario).

    Example: h2h pairs make --db pilot.db --per-scenario 2 --seed 7
    """
    from .engine import get_engine
    from .pairs import make_pairs

    wanted = tuple(m.strip() for m in (models or "").split(",") if m.strip())
    res = make_pairs(get_engine(db), compare=compare, per_scenario=per_scenario,  # type: ignore[arg-type]
                     models=wanted, seed=seed)
    out.print(str(res))
    sides = sorted(set(res.first) | set(res.second))
    if sides:
        out.print("first (left) / second: " + ", ".join(
            f"{m} {res.first.get(m, 0)}/{res.second.get(m, 0)}" for m in sides))
    if res.skipped:
        out.print(f"{res.skipped} scenarios have fewer than two replies and no pair")


@pairs_app.command("attention")
def pairs_attention(
    db: DbOption = None,
    n: Annotated[int, typer.Option("--n", help="How many to create.")] = 5,
    seed: Annotated[int, typer.Option(callback=check_seed, help="Seed of the choice.")] = 0,
) -> None:
    """Make attention-check pairs: a copy of a pair with one reply asking to be chosen as
    much better on every dimension (dealt by `h2h assign --pairs --attention`).

    Example: h2h pairs attention --n 5 --db pilot.db
    """
    from .engine import get_engine
    from .pairs import add_pair_checks

    made = add_pair_checks(get_engine(db), n, seed=seed)
    out.print(f"{len(made)} attention-check pairs added")


@raters_app.command("add")
def raters_add(
    name: Annotated[str, typer.Argument(help="Rater name, unique in the study.")],
    db: DbOption = None,
    role: Annotated[str, typer.Option(help="rater or admin.")] = "rater",
) -> None:
    """Add a rater or admin and print their access code once (only its hash is stored).

    Example: h2h raters add "Dr Lee" --role rater --db pilot.db
    """
    from .engine import get_engine
    from .raters import add_rater
    from .study import current_rubric

    engine = get_engine(db)
    current_rubric(engine)  # a clear message if there is no study yet
    rater, code = add_rater(engine, name, role)
    out.print(f"Added {rater.role} '{rater.name}'. Access code (shown only now): ")
    print(code)


@raters_app.command("list")
def raters_list(db: DbOption = None) -> None:
    """List raters and admins with their rating counts (codes are never shown).

    Example: h2h raters list --db pilot.db
    """
    from .engine import get_engine
    from .raters import list_raters
    from .study import current_rubric

    engine = get_engine(db)
    current_rubric(engine)
    t = Table("name", "role", "active", "sign-in", "ratings", "note")
    for r in list_raters(engine):
        t.add_row(r["name"], r["role"], "yes" if r["active"] else "no",
                  "code" if r["can_sign_in"] else "no code", str(r["n_ratings"]),
                  "simulated" if r["simulated"] else "")
    out.print(t)


@raters_app.command("deactivate")
def raters_deactivate(
    name: Annotated[str, typer.Argument(help="Rater name.")],
    db: DbOption = None,
) -> None:
    """Stop a rater from signing in; their ratings are kept.

    Example: h2h raters deactivate "Dr Lee" --db pilot.db
    """
    from .engine import get_engine
    from .raters import deactivate_rater
    from .study import current_rubric

    engine = get_engine(db)
    current_rubric(engine)
    n = deactivate_rater(engine, name)
    ended = f"; {n} open session{'s' if n != 1 else ''} ended" if n else ""
    out.print(f"Deactivated '{name}'{ended}; their ratings are kept")


@raters_app.command("reissue")
def raters_reissue(
    name: Annotated[str, typer.Argument(help="Rater name.")],
    db: DbOption = None,
) -> None:
    """Give a rater a new access code (a lost one): the old code stops working and their open
    sessions end at once; their ratings, queue and training are kept.

    Example: h2h raters reissue "Dr Lee" --db pilot.db
    """
    from .engine import get_engine
    from .raters import reissue_code
    from .study import current_rubric

    engine = get_engine(db)
    current_rubric(engine)
    code, n, active = reissue_code(engine, name)
    ended = f"; {n} open session{'s' if n != 1 else ''} ended" if n else ""
    later = "" if active else (f"; '{name}' is deactivated: h2h raters reactivate "
                               f"\"{name}\" lets them sign in")
    out.print(f"New code for '{name}' (the old one no longer works{ended}{later}). Access "
              "code (shown only now): ")
    print(code)


@raters_app.command("reactivate")
def raters_reactivate(
    name: Annotated[str, typer.Argument(help="Rater name.")],
    db: DbOption = None,
) -> None:
    """Let a deactivated rater sign in again with their code; their ratings, queue and
    training are as they were.

    Example: h2h raters reactivate "Dr Lee" --db pilot.db
    """
    from .engine import get_engine
    from .raters import reactivate_rater
    from .study import current_rubric

    engine = get_engine(db)
    current_rubric(engine)
    changed, has_code = reactivate_rater(engine, name)
    head = f"Reactivated '{name}'" if changed else f"'{name}' is already active; nothing changed"
    tail = "" if has_code else (f"; they have no access code yet: h2h raters reissue "
                                f"\"{name}\" gives them one")
    out.print(head + tail)


def backup_cmd(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="The backup file to write.",
                                           show_default=False)],
    db: DbOption = None,
    fmt: Annotated[str, typer.Option("--format", help="auto (SQLite file for a SQLite "
                                     "study, pg_dump archive for PostgreSQL), sqlite, or "
                                     "pg_dump.")] = "auto",
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
) -> None:
    """Back the study up while raters keep working: a consistent snapshot with every rating
    saved before the backup began, checked before it is kept.

    Example: h2h backup --db pilot.db --out backups/pilot-2026-03-01.db
    """
    from .backup import backup
    from .engine import describe_url, resolve_url

    if fmt not in ("auto", "sqlite", "pg_dump"):
        raise H2HError(f"--format: '{fmt}' is not one of auto, sqlite, pg_dump")
    res = backup(db or resolve_url(None), out_file, fmt=fmt, force=force)
    size = Path(res.path).stat().st_size / 1e6
    out.print(f"Backed up {describe_url(resolve_url(db))} to {res.path} ({res.format}, "
              f"{size:.1f} MB): {res}" + ("; integrity check ok" if res.format == "sqlite"
                                          else ""))


def restore_cmd(
    backup_file: Annotated[Path, typer.Argument(help="A file written by `h2h backup`.")],
    db: DbOption = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the content of an existing "
                                        "study.")] = False,
) -> None:
    """Restore a backup into a study file or an empty PostgreSQL database (an older backup
    is brought to the current schema; everyone signs in again).

    Example: h2h restore backups/pilot-2026-03-01.db --db pilot.db --force
    """
    from .backup import restore
    from .engine import resolve_url

    res = restore(backup_file, db or resolve_url(None), force=force)
    out.print(f"Restored {backup_file} into {res.path}: {res}; open sessions ended")


def register(app: typer.Typer) -> None:
    """Mount this package's commands on the root ``h2h`` app."""
    app.command("init")(init)
    app.command("backup")(backup_cmd)
    app.command("restore")(restore_cmd)
    app.add_typer(import_app, name="import")
    app.add_typer(export_app, name="export")
    app.add_typer(raters_app, name="raters")
    app.add_typer(pairs_app, name="pairs")



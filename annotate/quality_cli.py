"""`h2h quality`: gold scores, attention checks, training settings, qualification decisions,
per-rater monitoring and the rater model, from the command line.

Heavy imports (pandas, the models, the analysis) stay inside the commands so `h2h --help`
stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from data.cli import DbOption, check_seed

__all__ = ["quality_app"]

out = Console(highlight=False, soft_wrap=True)
quality_app = typer.Typer(help="Rater quality: gold items and training, qualification, "
                               "attention checks, monitoring, rater severity.",
                          no_args_is_help=True)
gold_app = typer.Typer(help="Gold (expert) scores used for training.", no_args_is_help=True)
attention_app = typer.Typer(help="Attention-check items.", no_args_is_help=True)
quality_app.add_typer(gold_app, name="gold")
quality_app.add_typer(attention_app, name="attention")


def _engine(db: str | None):
    from data.engine import get_engine
    from data.study import current_rubric

    engine = get_engine(db)
    current_rubric(engine)  # a clear error when there is no study (or an old schema)
    return engine


@gold_app.command("import")
def gold_import(file: Annotated[Path, typer.Argument(help="CSV: item_id, dimension, score, "
                                                          "rationale.")],
                db: DbOption = None) -> None:
    """Import expert scores; the file is checked whole first (nothing stored if any row is
    wrong). Re-importing replaces changed scores.

    Example: h2h quality gold import gold.csv --db pilot.db
    """
    from data.quality import import_gold, read_gold

    engine = _engine(db)
    recs = read_gold(engine, file)
    n = import_gold(engine, recs)
    out.print(f"{len(recs)} gold scores on {len({r.item_id for r in recs})} items read from "
              f"{file.name}; {n} stored or changed")


@attention_app.command("import")
def attention_import(file: Annotated[Path, typer.Argument(help="CSV: item_id, kind, "
                                                               "dimension, score[, tolerance].")],
                     db: DbOption = None) -> None:
    """Mark existing items as attention checks (instructed or known_answer).

    Example: h2h quality attention import checks.csv --db pilot.db
    """
    from data.quality import import_attention, read_attention

    engine = _engine(db)
    n = import_attention(engine, read_attention(engine, file))
    out.print(f"{n} attention-check items stored from {file.name}")


@attention_app.command("add")
def attention_add(n: Annotated[int, typer.Option("--n", help="How many to create.")] = 5,
                  score: Annotated[int | None, typer.Option(help="The score they ask for "
                                                            "(default: the scale's second "
                                                            "level).")] = None,
                  seed: Annotated[int, typer.Option(help="Which items are copied.",
                                                    callback=check_seed)] = 0,
                  db: DbOption = None) -> None:
    """Create instructed-response checks: copies of real items whose reply ends with
    "choose N on every dimension".

    Example: h2h quality attention add --n 5 --score 2 --db pilot.db
    """
    from data.quality import add_instructed_checks

    made = add_instructed_checks(_engine(db), n, score, seed)
    out.print(f"{len(made)} instructed-response checks created: {', '.join(made)}")


@quality_app.command("settings")
def settings(
    db: DbOption = None,
    training_count: Annotated[int | None, typer.Option(help="Gold items per round.")] = None,
    training_order: Annotated[str | None, typer.Option(help="fixed or random.")] = None,
    min_within1: Annotated[float | None, typer.Option(help="Needed share within one point.")]
    = None,
    min_qwk: Annotated[float | None, typer.Option(help="Needed quadratic-weighted κ.")] = None,
    attention_rate: Annotated[float | None, typer.Option(help="Attention checks per real "
                                                         "item (0-0.5).")] = None,
    min_seconds: Annotated[float | None, typer.Option(help="Speeder floor in seconds.")] = None,
    drift_window: Annotated[int | None, typer.Option(help="Ratings per drift window.")] = None,
    drift_threshold: Annotated[float | None, typer.Option(help="Drift flag in points.")]
    = None,
) -> None:
    """Show the study's rater-quality settings, or change the ones given.

    Example: h2h quality settings --min-within1 0.8 --min-qwk 0.6 --attention-rate 0.05
    """
    from data.quality import SETTINGS_FIELDS, get_settings, save_settings

    engine = _engine(db)
    given = {k: v for k, v in dict(training_count=training_count, training_order=training_order,
                                   min_within1=min_within1, min_qwk=min_qwk,
                                   attention_rate=attention_rate, min_seconds=min_seconds,
                                   drift_window=drift_window,
                                   drift_threshold=drift_threshold).items() if v is not None}
    st = save_settings(engine, **given) if given else get_settings(engine)
    for k in SETTINGS_FIELDS:
        out.print(f"{k}: {getattr(st, k)}")


@quality_app.command("status")
def status(db: DbOption = None,
           as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Per rater: qualification, accuracy on gold, attention checks, speed, retest, drift.

    Example: h2h quality status --db pilot.db
    """
    from annotate.services.quality import rater_quality

    df = rater_quality(_engine(db))
    if as_json:
        out.print_json(df.to_json(orient="records"))
    elif df.empty:
        out.print("No raters yet.")
    else:
        out.print(df.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


@quality_app.command("release")
def release_cmd(name: str, db: DbOption = None,
                note: Annotated[str, typer.Option(help="Why (kept with the decision).")] = ""
                ) -> None:
    """Let a rater rate real items without (or despite) passing training.

    Example: h2h quality release "Dr Lee" --note "experienced clinician"
    """
    from data.quality import release

    release(_engine(db), name, None, note)
    out.print(f"{name} is released: `h2h assign` deals real items to them now")


@quality_app.command("retrain")
def retrain_cmd(name: str, db: DbOption = None,
                note: Annotated[str, typer.Option(help="Why (kept with the decision).")] = ""
                ) -> None:
    """Send a rater through another training round (earlier rounds are kept).

    Example: h2h quality retrain "Dr Lee"
    """
    from data.quality import retrain

    row = retrain(_engine(db), name, None, note)
    out.print(f"{name} starts training round {row.round} at their next sign-in")


@quality_app.command("model")
def model_cmd(db: DbOption = None,
              as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False
              ) -> None:
    """The many-facet Rasch model per dimension: rater severity (logits, SE), infit/outfit,
    and how many items misfit. Fair scores per item are in the JSON.

    Example: h2h quality model --db pilot.db --json > model.json
    """
    from annotate.services.quality import rater_models

    models = rater_models(_engine(db))
    if as_json:
        out.print(json.dumps({d: m.as_dict() for d, m in models.items()}, indent=1,
                             ensure_ascii=False, default=float), soft_wrap=True)
        return
    for dim, m in models.items():
        out.print(f"[bold]{dim}[/bold]")
        if not m.estimable:
            out.print(f"  {m.reason}")
            continue
        out.print(m.raters.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        misfit = int((m.items["flag"] != "").sum())
        out.print(f"  {len(m.items)} items, {misfit} flagged; {m.n_ratings} ratings. "
                  + " ".join(m.notes))

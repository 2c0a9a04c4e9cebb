"""The root ``h2h`` command. Each package mounts its own commands here.

User errors (bad files, missing study, wrong options) print one clear message and exit with
status 1; they never show a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

# Only light modules at the top: every command, and `h2h --help`, pays for what is imported
# here. Each command imports the database layer, statistics or SDKs it needs in its body
# (tests/annotate/test_startup_imports.py holds this rule).
from analysis import cli as analysis_cli
from annotate.calibrate_cli import calibrate_app
from annotate.cli_help import tidy
from annotate.judge_import_cli import import_cmd
from annotate.pairwise_cli import pairwise_cmd
from annotate.quality_cli import quality_app
from data import cli as data_cli
from data.cli import check_seed
from data.errors import H2HError
from judge import cli as judge_cli

__all__ = ["app", "main"]

app = typer.Typer(
    name="h2h",
    help="h2htalk: rate AI companions' replies with psychologists and calibrated LLM judges.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)
data_cli.register(app)
analysis_cli.register(app)
app.add_typer(calibrate_app, name="calibrate")
app.add_typer(quality_app, name="quality")
judge_cli.register(app)
judge_cli.judge_app.command("pairwise")(pairwise_cmd)
judge_cli.judge_app.command("import")(import_cmd)

APP_FILE = Path(__file__).with_name("h2h_server.py")  # app.py and the cookie endpoint


@app.command()
def demo(
    db: data_cli.DbOption = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing demo file.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the simulated raters.",
                                      callback=check_seed)] = 20251,
    serve_after: Annotated[bool, typer.Option("--serve", help="Serve the app afterwards.")]
    = False,
    host: Annotated[str, typer.Option(help="Address to serve on (with --serve).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to serve on (with --serve).")] = 8501,
) -> None:
    """Build the demo study: the sample scenarios, simulated ratings, one rater and one admin.

    Example: h2h demo --db demo.db --force --serve
    """
    import sqlalchemy as sa

    from data.engine import describe_url, get_engine, resolve_url
    from data.raters import add_rater
    from data.sample import SimulationSpec, add_sample_quality, build_sample_study
    from data.study import current_rubric, init_study

    url = resolve_url(db or "demo.db")
    u = sa.engine.make_url(url)
    if u.get_backend_name() == "sqlite":
        path = Path(u.database)
        if path.exists():
            if not force:
                raise H2HError(f"{path} already exists; pass --force to rebuild the demo there")
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
    engine = get_engine(url)
    init_study(engine, name="H2HTalk demo study",
               description="Sample scenarios written for h2htalk, answered by three fictional "
                           "companion models; ratings by simulated raters.")
    items, ratings = build_sample_study(engine, current_rubric(engine), SimulationSpec(seed=seed))
    _, rater_code = add_rater(engine, "demo-rater", "rater")
    _, admin_code = add_rater(engine, "demo-admin", "admin")
    from annotate.services.assignment import assign as do_assign
    from judge.simulate import add_simulated_judges
    # judges first: attention checks are not study items and are not judged
    n_judged = add_simulated_judges(engine, current_rubric(engine), seed=seed)
    n_gold, checks = add_sample_quality(engine, current_rubric(engine), seed=seed)
    # side by side: every model pair per scenario, simulated preferences, a pairwise judge
    from data.sample import add_sample_pairs
    from judge.simulate import add_simulated_pairwise_judge
    n_pairs, n_prefs = add_sample_pairs(engine, current_rubric(engine), seed=seed)
    n_pairwise = add_simulated_pairwise_judge(engine, current_rubric(engine), seed=seed)
    # the queue is dealt now so the demo is ready; the Rate page still trains demo-rater first
    res = do_assign(engine, k=1, seed=seed, repeat_share=0.1, attention_rate=0.05,
                    include_unqualified=True)
    # a rater of the side-by-side pairs only (released: no training round first)
    from annotate.services.pair_assignment import assign_pairs
    from data.pairs import add_pair_checks
    from data.quality import release

    _, pairs_code = add_rater(engine, "demo-pairs", "rater")
    release(engine, "demo-pairs")
    add_pair_checks(engine, 3, seed=seed)
    pair_res = assign_pairs(engine, k=1, seed=seed, repeat_share=0.1, attention_rate=0.05,
                            only=("demo-pairs",))
    out.print(f"Demo study in {describe_url(url)}: {items.added} items, {ratings.added} "
              f"simulated ratings, {n_judged} simulated judgments (seed {seed}), {n_gold} gold "
              f"items, {len(checks)} attention checks.")
    out.print(f"Rater code (demo-rater): [bold]{rater_code}[/bold]  (a training round on "
              f"{n_gold} gold items first; then every other item, 10% hidden repeats, "
              f"{res.attention} attention checks)")
    out.print(f"Side by side: {n_pairs} pairs, {n_prefs} simulated preferences and "
              f"{n_pairwise} answers of a simulated pairwise judge (h2h arena --db "
              f"{db or 'demo.db'} --judge sim-judge-pairwise)")
    out.print(f"Side-by-side rater code (demo-pairs): [bold]{pairs_code}[/bold]  (compares "
              f"{pair_res.added} pairs side by side, hidden repeats and attention checks "
              "included)")
    out.print(f"Admin code (demo-admin): [bold]{admin_code}[/bold]")
    out.print(f"The benchmark's reference-based metrics against the raters: h2h metrics run "
              f"--db {db or 'demo.db'}, then h2h report")
    if serve_after:
        serve(db=url, host=host, port=port, trusted_proxy="")


@app.command()
def assign(
    db: data_cli.DbOption = None,
    k: Annotated[int, typer.Option("--k", help="Raters per item (overlap).")] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the dealing and the orders.",
                                      callback=check_seed)] = 0,
    repeats: Annotated[float, typer.Option(help="Share of each rater's items shown again "
                                           "later as hidden repeats (0-0.5).")] = 0.0,
    min_gap: Annotated[int, typer.Option("--min-gap", help="At least this many items between "
                                         "an item and its repeat.")] = 5,
    attention: Annotated[float | None, typer.Option(help="Attention checks mixed in per real "
                                                    "item (0-0.5; default: the study's "
                                                    "setting, see `h2h quality settings`).")]
    = None,
    include_unqualified: Annotated[bool, typer.Option(
        "--include-unqualified", help="Deal real items also to raters who have not passed "
                                      "training.")] = False,
    pairs: Annotated[bool, typer.Option(
        "--pairs", help="Deal the side-by-side pairs (`h2h pairs make`) instead of single "
                        "items: k raters per pair, sides blinded and counterbalanced, "
                        "attention-check pairs from `h2h pairs attention`.")] = False,
    to_shrink: Annotated[str | None, typer.Option(
        "--to-shrink", help="Active labelling: deal only the next --budget items that narrow "
        "this judge configuration's combined (PPI++) model means most (see `h2h "
        "leaderboard`).")] = None,
    budget: Annotated[int | None, typer.Option(help="With --to-shrink: how many items to "
                                               "pick.")] = None,
    halfwidth: Annotated[float, typer.Option(help="With --to-shrink: the ± CI half-width to "
                                             "say how many more ratings need.")] = 0.1,
) -> None:
    """Deal items (or, with --pairs, pairs to compare side by side) to the active raters: k
    per item, balanced, counterbalanced order.

    When the study has gold items, only raters who passed training (or were released) get
    real items, unless --include-unqualified. Attention checks are mixed in at --attention.

    Running it again only adds work (new items, new raters take over unstarted items);
    nothing already rated is moved. With --to-shrink JUDGE --budget N only N items are dealt:
    those where a human rating narrows the leaderboard's combined CIs most (active
    labelling; the draw's probabilities are stored so the estimates stay unbiased).

    Example: h2h assign --db pilot.db --k 3 --repeats 0.1 --seed 7
    """
    from annotate.services.assignment import assign as do_assign
    from data.engine import get_engine
    from data.migrate import ensure_current

    engine = get_engine(db)
    ensure_current(engine)
    if to_shrink is not None or budget is not None:
        from annotate.services.active import draw_and_report

        if to_shrink is None or budget is None:
            raise H2HError("--to-shrink JUDGE and --budget N go together")
        if pairs:
            raise H2HError("--to-shrink deals single items for the leaderboard; --pairs deals "
                           "side-by-side pairs: run them separately")
        picked, text = draw_and_report(engine, to_shrink, budget=budget, seed=seed,
                                       halfwidth=halfwidth)
        out.print(text)
        if not picked:
            return
        out.print(str(do_assign(engine, k=k, seed=seed, repeat_share=repeats, min_gap=min_gap,
                                attention_rate=attention,
                                include_unqualified=include_unqualified, only=set(picked))))
        return
    if pairs:
        from annotate.services.pair_assignment import assign_pairs as do_assign
    out.print(str(do_assign(engine, k=k, seed=seed, repeat_share=repeats, min_gap=min_gap,
                            attention_rate=attention, include_unqualified=include_unqualified)))


@app.command()
def serve(
    db: data_cli.DbOption = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8501,
    trusted_proxy: Annotated[str, typer.Option(
        "--trusted-proxy", help="Reverse proxies whose X-Forwarded-For header is believed "
        "(comma-separated addresses or networks, e.g. 127.0.0.1). Default: none.")] = "",
) -> None:
    """Serve the rating app in the browser.

    Several servers may serve one PostgreSQL study behind a proxy: sessions and the sign-in
    throttle live in the study database (see docs/app.md).

    Example: h2h serve --db pilot.db --port 8501
    """
    from annotate.services.proxies import parse_trusted
    from annotate.serving import serve_app, study_url

    url, where = study_url(db)
    try:
        parse_trusted(trusted_proxy)
    except ValueError as exc:
        raise H2HError(str(exc)) from None
    # The app reads X-Forwarded-For itself, only from --trusted-proxy; the web server under
    # Streamlit must not rewrite the client address from it (by default it believes the
    # header from any local peer).
    os.environ["H2H_TRUSTED_PROXIES"] = trusted_proxy
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    args = ["run", str(APP_FILE),
            "--server.address", host, "--server.port", str(port), "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
            "--global.developmentMode", "false", "--client.toolbarMode", "viewer",
            # Streamlit's full gc.collect() after every run took ~80 ms of each "Save and next"
            # with this app's heap (measured in benchmarks/bench_rating_latency.py); Python's
            # own generational collector still runs.
            "--runner.postScriptGC", "false"]
    out.print(f"Serving {where} at http://{host}:{port}  (Ctrl+C stops)")
    # Streamlit runs in this process and the study is checked while the browser loads the
    # app (annotate/serving.py; benchmarks/bench_cold_start.py measures start to first item).
    serve_app(url, host, port, args)


def main() -> None:
    """Console entry point: run the app, turning user errors into one clear message."""
    try:
        app()
    except H2HError as exc:
        # escape: a message may quote brackets ("pip install 'h2htalk[local]'") that rich
        # would otherwise take for markup and drop
        err.print(f"[red]Error:[/red] {escape(str(exc))}", markup=True, soft_wrap=True)
        raise SystemExit(1) from None
    except Exception as exc:
        # sqlalchemy is imported only by the commands that use a database; an error of its
        # kind can only come from one of those (unreachable server, damaged or read-only
        # file, …).
        sa_exc = getattr(sys.modules.get("sqlalchemy"), "exc", None)
        if sa_exc is None or not isinstance(exc, sa_exc.DatabaseError):
            raise
        msg = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        err.print("[red]Error:[/red] cannot use the study database: " + escape(msg))
        raise SystemExit(1) from None


tidy(app)  # every command's help reflowed and escaped (annotate/cli_help.py)

if __name__ == "__main__":
    main()

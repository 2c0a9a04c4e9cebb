"""`h2h judge run|collect` here, `h2h judge cost|export|configs` in :mod:`.cli_reports` and
`h2h generate` in :mod:`.generate_cli`, with the options they share in :mod:`.cli_common`.

Mounted on the root command in ``annotate/cli.py``. Commands are thin: they parse options, call
the functions in this package (the configuration: :func:`judge.resolve.resolve_spec`) and
print. Every user error is an :class:`H2HError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from data.cli import DbOption, check_seed

from .cli_common import (
    BackoffOpt,
    BaseUrlOpt,
    ConcurrencyOpt,
    DryOpt,
    JudgeTempOpt,
    KeyEnvOpt,
    ModelFileOpt,
    PricesOpt,
    ProviderOpt,
    QuietOpt,
    RetriesOpt,
    RpmOpt,
    RubricLanguageOpt,
    ShowOpt,
    TimeoutOpt,
    TpmOpt,
    concurrency_for,
    csv_list,
    out,
    print_request,
    print_run_stats,
    run_options,
)
from .cli_reports import configs_cmd, cost_cmd, export_cmd

# The database layer, the runner and the SDKs are imported inside the commands that use them,
# so that `h2h --help` and every other command start fast (issue 16).
if TYPE_CHECKING:
    from .config import JudgeSpec
    from .judging import JudgePlan

__all__ = ["judge_app", "register", "print_run_stats"]

judge_app = typer.Typer(help="Run LLM judges on the study's items with the study's rubric; "
                             "costs, batches and export.", no_args_is_help=True)


def describe_rubric_language(setting: str | None) -> str:
    """How a configuration shows the rubric: ``rubric in zh``, ``rubric in each item's
    language``, or empty for the rubric's own language."""
    if setting is None:
        return ""
    return "rubric in each item's language" if setting == "item" else f"rubric in {setting}"


def _describe(spec: JudgeSpec) -> str:
    extra = ", reason-first" if spec.reason_first else ""
    if spec.rubric_language is not None:
        extra += ", " + describe_rubric_language(spec.rubric_language)
    temp = (", temperature: none sent (the provider's default; stored before temperatures were "
            "fixed)") if spec.temperature is None else f", temperature {spec.temperature:g}"
    mode = "all dimensions in one call" if spec.all_mode else "one dimension per call"
    file = (f" ({spec.model_file}, SHA-256 {spec.model_digest[:12]}…)"
            if spec.model_file and spec.model_digest else "")
    return (f"Judge '{spec.display_name}' ({spec.hash[:8]}): {spec.provider} {spec.model}"
            f"{file}, template '{spec.template.name}', {mode}{extra}{temp}, {spec.samples} "
            "sample(s)")


def _print_plan(plan: JudgePlan) -> None:
    if plan.limited:
        out.print(plan.limited)
    redo = "".join(f"; {n} again ({why})" for why, n in plan.redo.items())
    out.print(f"{plan.total_keys} (item, dimension, sample) judgments in scope: "
              f"{plan.done_keys} already stored, {plan.in_batches} waiting in batches, "
              f"{plan.pending_keys} to ask in {len(plan.units)} calls{redo}")


# --- h2h judge run ----------------------------------------------------------------------------

@judge_app.command("run")
def run_cmd(
    db: DbOption = None,
    config: Annotated[str | None, typer.Option(help="Re-run (or resume) a stored configuration "
                                               "by name or hash.")] = None,
    provider: ProviderOpt = None,
    model: Annotated[str | None, typer.Option(help="Model name as the provider knows it.")]
    = None,
    name: Annotated[str | None, typer.Option(help="Name of this configuration (default: model "
                                             "and hash). Judges appear by this name in "
                                             "analyses.")] = None,
    template: Annotated[Path | None, typer.Option(help="Prompt template TOML (default: the "
                                                  "bundled judge_default.toml, in "
                                                  "data/prompts).")]
    = None,
    mode: Annotated[str | None, typer.Option(help="per-dimension (one call each) or all (every "
                                             "dimension in one call).")] = None,
    reason_first: Annotated[bool, typer.Option("--reason-first", help="Ask for reasoning "
                                               "before the score.")] = False,
    temperature: JudgeTempOpt = None,
    max_tokens: Annotated[int | None, typer.Option(help="Longest answer in tokens (1024).")]
    = None,
    samples: Annotated[int | None, typer.Option(help="Samples per item and dimension (1).")]
    = None,
    rubric_language: RubricLanguageOpt = None,
    structured: Annotated[bool, typer.Option("--structured/--no-structured", help="Ask for "
                                             "schema-bound output (tool use / json_schema); "
                                             "--no-structured for servers without it.")] = True,
    items: Annotated[list[str] | None, typer.Option(help="Only these item ids (comma-separated "
                                                    "or repeated).")] = None,
    task: Annotated[str | None, typer.Option(help="Only items of this task family.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many items: a seeded sample "
                                              "spread over task families and models.")]
    = None,
    seed: Annotated[int, typer.Option(callback=check_seed, help="Seed of the --limit sample.")] = 0,
    dimensions: Annotated[list[str] | None, typer.Option(help="Only these dimensions.")] = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    model_file: ModelFileOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_retries: RetriesOpt = 6,
    timeout: TimeoutOpt = 120.0,
    backoff: BackoffOpt = 1.0,
    batch: Annotated[bool, typer.Option("--batch", help="Submit as Anthropic Message Batches "
                                        "(half price; results within 24 h).")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="With --batch, wait and collect the "
                                       "results.")] = False,
    poll: Annotated[float, typer.Option(help="With --wait, seconds between status checks.")]
    = 60.0,
    dry: DryOpt = False,
    show: ShowOpt = 1,
    prices: PricesOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Judge the study's items: only what is not stored yet, each result saved as it arrives.

    A killed or interrupted run continues where it stopped when run again; a finished
    configuration makes no request at all.

    Example: h2h judge run --provider anthropic --model claude-sonnet-4-5 --name sonnet-v1
    """
    from data.engine import get_engine

    from .judging import Filters
    from .prices import load_prices
    from .providers import make_provider
    from .resolve import SpecOptions, resolve_spec
    from .run import run_judge

    engine = get_engine(db)
    spec, note = resolve_spec(engine, SpecOptions(
        config, provider, model, name, template, mode, reason_first, temperature, max_tokens,
        samples, rubric_language, structured, model_file))
    filters = Filters(items=csv_list(items), task=task, limit=limit,
                      dimensions=csv_list(dimensions), seed=seed)
    table = load_prices(prices).for_server(spec.provider, base_url)
    n_calls, why = concurrency_for(concurrency, spec.provider, base_url)
    options = run_options(n_calls, rpm, tpm, max_retries, backoff)
    prov = make_provider(spec.provider, base_url=base_url, api_key_env=api_key_env,
                         timeout=timeout, structured=spec.structured, concurrency=n_calls)
    out.print(_describe(spec))
    if note:
        out.print(note)
    if not dry and not batch:
        out.print(f"Concurrency {n_calls} ({why})")
    if dry:
        _dry_run(engine, spec, filters, table, show, batch)
        return
    if batch:
        _run_batch(engine, spec, filters, prov, table, options, wait, poll)
        return
    plan, stats = run_judge(engine, spec, prov, filters=filters, options=options, prices=table,
                            show_progress=not quiet)
    _print_plan(plan)
    if not plan.total_keys:
        out.print("No items in scope: import items with `h2h import items` (or generate them "
                  "with `h2h generate`), or check --items / --task / --dimensions.")
        return
    if not plan.units:
        out.print("Nothing to ask: every judgment in scope is stored. No request was made.")
        return
    print_run_stats(stats)


def _dry_run(engine, spec: JudgeSpec, filters, table, show: int, batch: bool) -> None:
    """The plan, the first prompts and the estimate; nothing is sent or written."""
    from .judging import plan_judging
    from .progress import format_usd
    from .run import dry_run

    plan = plan_judging(engine, spec, filters)
    _print_plan(plan)
    d = dry_run(plan, table, show=show, batch=batch)
    for label, req in d.prompts:
        print_request(label, req)
    if d.cost is None:
        cost = f"unknown (no price for '{spec.model}' in {table.source})"
    elif d.measured is None:
        cost = f"at most {format_usd(d.cost_max)}"
    else:
        cost = f"{format_usd(d.cost)} (at most {format_usd(d.cost_max)})"
    out.print(f"Dry run: {d.calls} calls, about {d.input_tokens:,} input tokens and "
              f"{d.describe_output(spec.max_tokens)}; estimated cost {cost}"
              f"{' at the batch discount' if batch else ''}. Nothing was sent.")


def _run_batch(engine, spec, filters, prov, table, options, wait, poll) -> None:
    from .batches import collect_batches, submit_batches
    from .judging import plan_judging
    from .run import run_async
    plan = plan_judging(engine, spec, filters)
    _print_plan(plan)
    if not plan.units:
        out.print("Nothing to submit: every judgment in scope is stored or waiting in a batch.")
        return

    async def go():
        try:
            ids = await submit_batches(engine, plan, prov, table, options, say=out.print)
            if not wait:
                return ids, None
            rep = await collect_batches(engine, prov, table, config_hash=spec.hash, wait=True,
                                        poll=poll, options=options, say=out.print)
            return ids, rep
        finally:
            await prov.aclose()

    ids, rep = run_async(go())
    if rep is None:
        out.print(f"Submitted {len(ids)} batch(es). Collect the results later with "
                  f"`h2h judge collect --config {spec.display_name}`.")
    else:
        _print_collect(rep)


def _print_collect(rep) -> None:
    from .progress import format_usd

    out.print(f"Collected {len(rep.collected)} batch(es): {rep.scored} scored, {rep.unscored} "
              f"unscored, {rep.failed} request failures; cost "
              f"{format_usd(rep.cost, rep.unpriced)} (batch discount applied)")
    if rep.reasons:
        out.print("Not scored: " + ", ".join(f"{k} {v}" for k, v in rep.reasons.most_common()))
    if rep.pending:
        out.print(f"{len(rep.pending)} batch(es) still processing: "
                  + ", ".join(b for b, _ in rep.pending) + "; run `h2h judge collect` later")


@judge_app.command("collect")
def collect_cmd(
    db: DbOption = None,
    config: Annotated[str | None, typer.Option(help="Only batches of this configuration.")]
    = None,
    wait: Annotated[bool, typer.Option("--wait", help="Poll until every batch has ended.")]
    = False,
    poll: Annotated[float, typer.Option(help="Seconds between status checks.")] = 60.0,
    cancel: Annotated[bool, typer.Option("--cancel", help="Cancel the open batches first "
                                         "(requests not yet run are stored as canceled).")]
    = False,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    timeout: TimeoutOpt = 120.0,
    prices: PricesOpt = None,
) -> None:
    """Collect the results of submitted Anthropic Message Batches into the study.

    Example: h2h judge collect --db pilot.db --wait --poll 300
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .batches import collect_batches, open_batches
    from .prices import load_prices
    from .providers import make_provider
    from .run import run_async
    from .store import find_config

    engine = get_engine(db)
    current_rubric(engine)
    config_hash = find_config(engine, config).hash if config else None
    if not open_batches(engine, config_hash):
        out.print("No batches waiting to be collected.")
        return
    prov = make_provider("anthropic", base_url=base_url, api_key_env=api_key_env,
                         timeout=timeout)
    table = load_prices(prices)

    async def go():
        try:
            return await collect_batches(engine, prov, table, config_hash=config_hash,
                                         wait=wait, poll=poll, cancel=cancel, say=out.print)
        finally:
            await prov.aclose()

    _print_collect(run_async(go()))


# the reports on what was run (cost, export, configurations): judge/cli_reports.py
judge_app.command("cost")(cost_cmd)
judge_app.command("export")(export_cmd)
judge_app.command("configs")(configs_cmd)


def register(app: typer.Typer) -> None:
    """Mount ``h2h judge …`` and ``h2h generate`` on the root app."""
    from .generate_cli import generate

    app.add_typer(judge_app, name="judge")
    app.command("generate")(generate)

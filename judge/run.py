"""``h2h judge run`` as a function: plan, dry-run or call, store, summarise.

Order of work: the plan is read from the database first; with nothing left to ask the run ends
there without contacting the provider (a finished configuration costs nothing to re-run). Then
one preflight call checks the key and the server, and only then is anything written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine

from data.engine import read_session
from data.errors import H2HError

from .calls import RunOptions, RunStats, run_calls
from .config import JudgeSpec
from .judging import (
    Filters,
    JudgePlan,
    JudgeSink,
    expected_output_tokens,
    plan_judging,
    unit_request,
)
from .prices import PriceTable
from .progress import RunProgress
from .providers.base import Provider, Request
from .store import check_name_free, record_output_form, save_config, stored_output_form

__all__ = ["DryRun", "dry_run", "run_judge", "run_async"]


@dataclass
class DryRun:
    """What a run would do: calls, estimated tokens and cost, and sample prompts.

    ``output_tokens`` is the configuration's measured mean output per call times the calls
    when earlier runs exist (``measured`` says over how many calls), else the bound
    ``max_tokens × calls``; ``output_tokens_max`` and ``cost_max`` are always that bound.
    """

    calls: int
    keys: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    prompts: list[tuple[str, Request]] = field(default_factory=list)
    output_tokens_max: int = 0
    cost_max: float | None = None
    measured: tuple[float, int] | None = None

    def describe_output(self, max_tokens: int) -> str:
        """``about 1,100 output tokens (mean 100 per call measured over …)`` or the bound."""
        if self.measured is None:
            return (f"at most {self.output_tokens_max:,} output tokens (--max-tokens "
                    f"{max_tokens} × {self.calls} calls; no earlier run of this configuration "
                    "to measure from)")
        mean, n = self.measured
        return (f"about {self.output_tokens:,} output tokens (mean {mean:,.0f} per call "
                f"measured over {n} earlier calls of this configuration; at most "
                f"{self.output_tokens_max:,} at --max-tokens {max_tokens})")


def dry_run(plan: JudgePlan, prices: PriceTable, *, show: int = 1,
            batch: bool = False) -> DryRun:
    """Render every prompt and estimate tokens and cost; nothing is sent or written."""
    inp = 0
    prompts: list[tuple[str, Request]] = []
    for unit in plan.units:
        req, total = unit_request(plan, unit)
        inp += total - expected_output_tokens(plan.spec, len(unit.ask))
        if len(prompts) < show:
            label = f"item {unit.item_id}, {'+'.join(unit.ask)}, sample {unit.sample}"
            prompts.append((label, req))
    calls = len(plan.units)
    bound = calls * plan.spec.max_tokens
    measured = plan.measured_output
    out = bound if measured is None else min(bound, round(measured[0] * calls))

    def price(output: int) -> float | None:
        if not calls:
            return 0.0
        return prices.cost(plan.spec.model, input_tokens=inp, output_tokens=output,
                           batch=batch, provider=plan.spec.provider)

    return DryRun(calls=calls, keys=plan.pending_keys, input_tokens=inp, output_tokens=out,
                  cost=price(out), prompts=prompts, output_tokens_max=bound,
                  cost_max=price(bound), measured=measured)


def run_async(coro):
    """Run a coroutine to the end; Ctrl+C stops it, keeping what was stored."""
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        raise H2HError("interrupted; every result stored so far is kept - run the same "
                       "command again to continue") from None


async def _judge(engine: Engine, plan: JudgePlan, provider: Provider, prices: PriceTable,
                 options: RunOptions, show_progress: bool) -> RunStats:
    try:
        await provider.preflight()
        save_config(engine, plan.spec.row())
        provider.start_from(stored_output_form(engine, plan.spec.hash))
        sink = JudgeSink(engine, plan, prices, output_form=lambda: provider.output_form)
        try:
            with RunProgress(plan.spec.display_name, len(plan.units),
                             enabled=show_progress) as progress:
                stats = await run_calls(provider, plan.units, sink, options, progress)
        finally:  # a run stopped by an error has still learnt what the server takes
            record_output_form(engine, plan.spec.hash, provider.output_form)
        stats.output_form = provider.output_form
        stats.notes = list(provider.notes) + stats.notes
        return stats
    finally:
        await provider.aclose()


def run_judge(engine: Engine, spec: JudgeSpec, provider: Provider, *,
              filters: Filters = Filters(), options: RunOptions = RunOptions(),
              prices: PriceTable, show_progress: bool = False) -> tuple[JudgePlan, RunStats]:
    """Judge what is still missing for ``spec``; returns the plan and the run's statistics."""
    plan = plan_judging(engine, spec, filters)
    with read_session(engine) as s:
        check_name_free(s, spec.display_name, spec.hash)
    if not plan.units:
        return plan, RunStats()
    stats = run_async(_judge(engine, plan, provider, prices, options, show_progress))
    return plan, stats

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
from .runner import RunOptions, RunStats, run_calls
from .store import check_name_free, record_output_form, save_config, stored_output_form

__all__ = ["DryRun", "dry_run", "run_judge", "run_async"]


@dataclass
class DryRun:
    """What a run would do: calls, estimated tokens and cost, and sample prompts."""

    calls: int
    keys: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    prompts: list[tuple[str, Request]] = field(default_factory=list)


def dry_run(plan: JudgePlan, prices: PriceTable, *, show: int = 1,
            batch: bool = False) -> DryRun:
    """Render every prompt and estimate tokens and cost; nothing is sent or written."""
    inp = out = 0
    prompts: list[tuple[str, Request]] = []
    for unit in plan.units:
        req, total = unit_request(plan, unit)
        answer = expected_output_tokens(plan.spec, len(unit.ask))
        inp += total - answer
        out += answer
        if len(prompts) < show:
            label = f"item {unit.item_id}, {'+'.join(unit.ask)}, sample {unit.sample}"
            prompts.append((label, req))
    cost = prices.cost(plan.spec.model, input_tokens=inp, output_tokens=out, batch=batch)
    return DryRun(calls=len(plan.units), keys=plan.pending_keys, input_tokens=inp,
                  output_tokens=out, cost=cost if plan.units else 0.0, prompts=prompts)


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
        sink = JudgeSink(engine, plan, prices)
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

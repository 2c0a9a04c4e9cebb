"""``h2h judge run`` as a function: plan, dry-run or call, store, summarise.

Order of work: the plan is read from the database first; with nothing left to ask the run ends
there without contacting the provider (a finished configuration costs nothing to re-run). Then
one preflight call checks the key and the server, and only then is anything written.
"""

from __future__ import annotations

import asyncio

from sqlalchemy.engine import Engine

from data.engine import read_session
from data.errors import H2HError

from .calls import RunOptions, RunStats, run_calls
from .config import JudgeSpec
from .estimate import DryRun, EstimatedCall, estimate_calls
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
from .providers.base import Provider
from .store import check_name_free, config_for_run, record_output_form, stored_output_form

__all__ = ["DryRun", "dry_run", "run_judge", "run_async"]


def dry_run(plan: JudgePlan, prices: PriceTable, *, show: int = 1,
            batch: bool = False) -> DryRun:
    """Render every prompt and estimate tokens and cost; nothing is sent or written. The
    answers' length is the configuration's measured mean when earlier runs exist, else
    ``max_tokens`` per call (:func:`~.estimate.estimate_calls`)."""
    spec = plan.spec
    calls = []
    for unit in plan.units:
        req, total = unit_request(plan, unit)
        calls.append(EstimatedCall(
            f"item {unit.item_id}, {'+'.join(unit.ask)}, sample {unit.sample}", req,
            spec.model, spec.provider, total - expected_output_tokens(spec, len(unit.ask)),
            spec.max_tokens, spec.max_tokens))
    return estimate_calls(calls, prices, show=show, batch=batch, keys=plan.pending_keys,
                          measured=plan.measured_output)


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
        with config_for_run(engine, plan.spec.row()):
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

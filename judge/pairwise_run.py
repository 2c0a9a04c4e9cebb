"""``h2h judge pairwise`` as functions: plan, dry-run or call (directly or in Anthropic
Message Batches), store; the same runner, preflight, output-form negotiation, ledger and
resume as ``h2h judge run`` (:mod:`judge.run`, :mod:`judge.batches`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine

from data.engine import read_session, write_connection, write_session
from data.models import JudgeBatch, JudgeConfigRow, PairJudgment, utcnow
from data.study import rubric_by_version

from .batch_report import CollectReport, require_batches
from .calls import RunOptions, RunStats, retrying, run_calls
from .config import JudgeSpec, spec_from_row
from .estimate import DryRun, EstimatedCall, estimate_calls
from .pairwise import (
    PairFilters,
    PairPlan,
    PairSink,
    PairUnit,
    expected_output_tokens,
    pair_views,
    plan_pairwise,
    store_pair_judgments,
    unit_request,
)
from .prices import PriceTable
from .progress import RunProgress
from .providers.base import BatchFailure, BatchProvider, Provider
from .run import run_async
from .store import (
    check_name_free,
    config_for_run,
    insert_ledger,
    record_output_form,
    save_config,
    stored_output_form,
)

__all__ = ["run_pairwise", "dry_run_pairwise", "submit_pair_batches", "store_pair_batch",
           "pair_custom_id"]


def dry_run_pairwise(plan: PairPlan, prices: PriceTable, *, show: int = 1,
                     batch: bool = False) -> DryRun:
    """Every prompt rendered, tokens and cost estimated; nothing is sent or written (the
    estimate of judging's dry run, :func:`judge.estimate.estimate_calls`)."""
    spec = plan.spec
    calls = []
    for unit in plan.units:
        req, total = unit_request(plan, unit)
        calls.append(EstimatedCall(
            f"pair {unit.pair_id} in order {unit.order}, {'+'.join(unit.ask)}, sample "
            f"{unit.sample}", req, spec.model, spec.provider,
            total - expected_output_tokens(spec, len(unit.ask)), spec.max_tokens,
            spec.max_tokens))
    return estimate_calls(calls, prices, show=show, batch=batch, keys=plan.pending_keys,
                          measured=plan.measured_output)


async def _pairwise(engine: Engine, plan: PairPlan, provider: Provider, prices: PriceTable,
                    options: RunOptions, show_progress: bool) -> RunStats:
    try:
        await provider.preflight()
        with config_for_run(engine, plan.spec.row()):
            provider.start_from(stored_output_form(engine, plan.spec.hash))
            sink = PairSink(engine, plan, prices, output_form=lambda: provider.output_form)
            try:
                with RunProgress(plan.spec.display_name, len(plan.units),
                                 enabled=show_progress) as progress:
                    stats = await run_calls(provider, plan.units, sink, options, progress)
            finally:
                record_output_form(engine, plan.spec.hash, provider.output_form)
        stats.output_form = provider.output_form
        stats.notes = list(provider.notes) + stats.notes
        return stats
    finally:
        await provider.aclose()


def run_pairwise(engine: Engine, spec: JudgeSpec, provider: Provider, *,
                 filters: PairFilters = PairFilters(), options: RunOptions = RunOptions(),
                 prices: PriceTable, show_progress: bool = False) -> tuple[PairPlan, RunStats]:
    """Judge in both orders what is still missing for the pairwise ``spec``."""
    plan = plan_pairwise(engine, spec, filters)
    with read_session(engine) as s:
        check_name_free(s, spec.display_name, spec.hash)
    if not plan.units:
        return plan, RunStats()
    return plan, run_async(_pairwise(engine, plan, provider, prices, options, show_progress))


# --- Anthropic Message Batches ----------------------------------------------------------------

def pair_custom_id(config_hash: str, unit: PairUnit) -> str:
    raw = f"{config_hash}|pair {unit.pair_id}|{unit.order}|{'+'.join(unit.store)}|{unit.sample}"
    return "h2h-" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:40]


async def submit_pair_batches(engine: Engine, plan: PairPlan, provider: Provider,
                              prices: PriceTable, options: RunOptions = RunOptions(),
                              say: Callable[[str], None] = lambda _m: None) -> list[str]:
    """Submit every unit of ``plan`` (at most 100,000 requests and 256 MB a batch, as
    :func:`judge.batches.submit_batches`); each batch is stored as soon as it is accepted."""
    bp = require_batches(provider)
    await bp.preflight()
    save_config(engine, plan.spec.row())
    sink = PairSink(engine, plan, prices, batch_id="")
    limit = int(bp.max_batch_bytes * 0.95)
    ids: list[str] = []
    chunk: list[tuple[str, dict[str, Any], PairUnit]] = []
    size = 0

    async def flush() -> None:
        nonlocal chunk, size
        if not chunk:
            return
        reqs = [(cid, params) for cid, params, _ in chunk]
        info = await retrying(lambda: bp.submit_batch(reqs), options)
        mapping = {cid: {"pair": u.pair_id, "order": u.order, "ask": list(u.ask),
                         "store": list(u.store), "sample": u.sample} for cid, _, u in chunk}
        with write_session(engine) as s:
            s.add(JudgeBatch(provider_batch_id=info.id, config_hash=plan.spec.hash,
                             status=info.status, request_count=len(chunk), requests=mapping,
                             submitted_at=utcnow()))
        ids.append(info.id)
        say(f"Submitted batch {info.id} with {len(chunk)} requests")
        chunk, size = [], 0

    for unit in plan.units:
        req, _ = sink.request_for(unit)
        cid = pair_custom_id(plan.spec.hash, unit)
        params = bp.batch_params(req)
        n = len(json.dumps({"custom_id": cid, "params": params}, ensure_ascii=False)
                .encode("utf-8")) + 2
        if chunk and (len(chunk) >= bp.max_batch_requests or size + n > limit):
            await flush()
        chunk.append((cid, params, unit))
        size += n
    await flush()
    return ids


async def store_pair_batch(engine: Engine, batch: JudgeBatch, bp: BatchProvider,
                           prices: PriceTable, report: CollectReport) -> None:
    """Store an ended batch of a pairwise configuration (called by
    :func:`judge.batches.collect_batches`); what was stored before is skipped."""
    with read_session(engine) as s:
        row = s.get(JudgeConfigRow, batch.config_hash)
        already = {tuple(r) for r in s.exec(
            PairJudgment.__table__.select().with_only_columns(
                PairJudgment.pair_id, PairJudgment.dimension, PairJudgment.order,
                PairJudgment.sample).where(PairJudgment.batch_id == batch.provider_batch_id)
        ).all()}
    spec = spec_from_row(row)
    views = pair_views(engine, sorted({int(e["pair"]) for e in batch.requests.values()}))
    plan = PairPlan(spec, rubric_by_version(engine, spec.rubric_version), views, [])
    sink = PairSink(engine, plan, prices, batch_id=batch.provider_batch_id)
    seen: set[str] = set()
    group: list[tuple[PairUnit, Any]] = []

    def unit_of(cid: str) -> PairUnit | None:
        e = batch.requests.get(cid)
        if e is None or int(e["pair"]) not in views:
            return None
        u = PairUnit(int(e["pair"]), e["order"], tuple(e["ask"]), tuple(e["store"]),
                     int(e["sample"]))
        return None if all(k in already for k in u.keys) else u

    def write(pending: list[tuple[PairUnit, Any]]) -> None:
        with write_connection(engine) as conn:
            for unit, res in pending:
                if isinstance(res, BatchFailure):
                    store_pair_judgments(conn, spec.hash, sink.failure_rows(unit, res.reason))
                    insert_ledger(conn, [sink.ledger(unit, res.kind)])
                    report.failed += len(unit.store)
                    report.reasons["request"] += len(unit.store)
                    continue
                rows, tally = sink.rows_for(unit, res)
                u = res.usage
                cost = prices.cost_of(spec.model, u, batch=True)
                store_pair_judgments(conn, spec.hash, rows)
                insert_ledger(conn, [sink.ledger(
                    unit, "ok" if not tally.unscored else "unscored answer", u, cost)])
                report.scored += tally.scored
                report.unscored += tally.unscored
                report.reasons.update(tally.reasons)
                if cost is None:
                    report.unpriced = True
                else:
                    report.cost += cost

    async for cid, res in bp.batch_results(batch.provider_batch_id):
        seen.add(cid)
        unit = unit_of(cid)
        if unit is not None:
            group.append((unit, res))
        if len(group) >= 200:
            write(group)
            group = []
    for cid in batch.requests:
        if cid not in seen and (unit := unit_of(cid)) is not None:
            group.append((unit, BatchFailure("missing", "no result returned by the batch")))
    write(group)
    with write_session(engine) as s:
        b = s.get(JudgeBatch, batch.id)
        b.status, b.collected_at = "ended", utcnow()
        b.ended_at = b.ended_at or utcnow()
        s.add(b)


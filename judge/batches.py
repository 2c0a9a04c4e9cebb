"""Anthropic Message Batches: submit a plan in chunks, then collect the results later.

Each batch holds at most 100,000 requests and 256 MB (the API's limits; a 5 % margin is kept
for framing). A batch is stored as soon as the API accepts it, with the map from each
``custom_id`` to its (item, dimensions, sample), so ``h2h judge collect`` can pick it up from any
later process and a new ``run --batch`` never submits the same request twice.

Collecting maps results by ``custom_id`` (they arrive in any order). Succeeded requests are
parsed like direct calls; errored, expired and canceled ones, and requests the batch returned
no result for, are stored as unscored with the reason (and asked again by the next run). The
ledger prices batch calls with the table's ``batch_discount`` (half price). Results are written
in groups of 200 per transaction; collecting a batch again skips what was already stored.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session, write_connection, write_session
from data.models import Item, JudgeBatch, JudgeConfigRow, Judgment, utcnow
from data.study import rubric_by_version

from .batch_report import CollectReport, require_batches
from .calls import RunOptions, retrying
from .config import spec_from_row
from .judging import ItemView, JudgePlan, JudgeSink, JudgeUnit
from .prices import PriceTable
from .providers.base import BatchFailure, BatchProvider, Provider
from .store import insert_ledger, save_config, store_judgments

__all__ = ["custom_id", "submit_batches", "collect_batches", "CollectReport",
           "open_batches"]

_GROUP = 200


def custom_id(config_hash: str, unit: JudgeUnit) -> str:
    """A short id the API accepts (``[A-Za-z0-9_-]{1,64}``), unique per request."""
    raw = f"{config_hash}|{unit.item_id}|{'+'.join(unit.store)}|{unit.sample}"
    return "h2h-" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:40]


async def submit_batches(engine: Engine, plan: JudgePlan, provider: Provider,
                         prices: PriceTable, options: RunOptions = RunOptions(),
                         say: Callable[[str], None] = lambda _m: None) -> list[str]:
    """Submit every unit of ``plan``; returns the provider's batch ids."""
    bp = require_batches(provider)
    await bp.preflight()
    save_config(engine, plan.spec.row())
    sink = JudgeSink(engine, plan, prices, batch_id="")
    limit = int(bp.max_batch_bytes * 0.95)
    ids: list[str] = []
    chunk: list[tuple[str, dict[str, Any], JudgeUnit]] = []
    size = 0

    async def flush() -> None:
        nonlocal chunk, size
        if not chunk:
            return
        reqs = [(cid, params) for cid, params, _ in chunk]
        info = await retrying(lambda: bp.submit_batch(reqs), options)
        mapping = {cid: {"item": u.item_id, "ask": list(u.ask), "store": list(u.store),
                         "sample": u.sample} for cid, _, u in chunk}
        with write_session(engine) as s:
            s.add(JudgeBatch(provider_batch_id=info.id, config_hash=plan.spec.hash,
                             status=info.status, request_count=len(chunk), requests=mapping,
                             submitted_at=utcnow()))
        ids.append(info.id)
        say(f"Submitted batch {info.id} with {len(chunk)} requests")
        chunk, size = [], 0

    for unit in plan.units:
        req, _ = sink.request_for(unit)
        cid = custom_id(plan.spec.hash, unit)
        params = bp.batch_params(req)
        n = len(json.dumps({"custom_id": cid, "params": params}, ensure_ascii=False)
                .encode("utf-8")) + 2
        if chunk and (len(chunk) >= bp.max_batch_requests or size + n > limit):
            await flush()
        chunk.append((cid, params, unit))
        size += n
    await flush()
    return ids


def open_batches(engine: Engine, config_hash: str | None = None) -> list[JudgeBatch]:
    with read_session(engine) as s:
        q = select(JudgeBatch).where(JudgeBatch.collected_at.is_(None))
        if config_hash is not None:
            q = q.where(JudgeBatch.config_hash == config_hash)
        return list(s.exec(q.order_by(JudgeBatch.id)).all())


def _sink_for(engine: Engine, batch: JudgeBatch, prices: PriceTable) -> JudgeSink:
    with read_session(engine) as s:
        row = s.get(JudgeConfigRow, batch.config_hash)
        ids = sorted({e["item"] for e in batch.requests.values()})
        items: dict[str, ItemView] = {}
        for i in range(0, len(ids), 500):
            for r in s.exec(select(Item.id, Item.task, Item.context, Item.response,
                                   Item.content_hash).where(Item.id.in_(ids[i:i + 500]))):
                items[r[0]] = ItemView(*r)
    spec = spec_from_row(row)
    plan = JudgePlan(spec=spec, rubric=rubric_by_version(engine, spec.rubric_version),
                     items=items, units=[])
    return JudgeSink(engine, plan, prices, batch_id=batch.provider_batch_id)


async def _store_results(engine: Engine, batch: JudgeBatch, bp: BatchProvider,
                         prices: PriceTable, report: CollectReport) -> None:
    if any("pair" in e for e in batch.requests.values()):  # a pairwise judge's batch
        from .pairwise_run import store_pair_batch

        await store_pair_batch(engine, batch, bp, prices, report)
        return
    sink = _sink_for(engine, batch, prices)
    with read_session(engine) as s:
        already = {tuple(r) for r in s.exec(
            select(Judgment.item_id, Judgment.dimension, Judgment.sample)
            .where(Judgment.batch_id == batch.provider_batch_id)).all()}
    seen: set[str] = set()
    group: list[tuple[JudgeUnit, Any]] = []

    def write(pending: list[tuple[JudgeUnit, Any]]) -> None:
        with write_connection(engine) as conn:
            for unit, res in pending:
                if isinstance(res, BatchFailure):
                    store_judgments(conn, sink.spec.hash, sink.failure_rows(unit, res.reason))
                    insert_ledger(conn, [sink.ledger(unit, res.kind)])
                    report.failed += len(unit.store)
                    report.reasons["request"] += len(unit.store)
                    continue
                rows, tally = sink.rows_for(unit, res)
                u = res.usage
                cost = prices.cost_of(sink.spec.model, u, batch=True)
                store_judgments(conn, sink.spec.hash, rows)
                insert_ledger(conn, [sink.ledger(
                    unit, "ok" if not tally.unscored else "unscored answer", u, cost)])
                report.scored += tally.scored
                report.unscored += tally.unscored
                report.reasons.update(tally.reasons)
                if cost is None:
                    report.unpriced = True
                else:
                    report.cost += cost

    def unit_of(cid: str) -> JudgeUnit | None:
        e = batch.requests.get(cid)
        if e is None or e["item"] not in sink.plan.items:
            return None  # not ours, or the item was deleted since
        u = JudgeUnit(e["item"], tuple(e["ask"]), tuple(e["store"]), int(e["sample"]))
        done = all((u.item_id, d, u.sample) in already for d in u.store)
        return None if done else u

    async for cid, res in bp.batch_results(batch.provider_batch_id):
        seen.add(cid)
        unit = unit_of(cid)
        if unit is not None:
            group.append((unit, res))
        if len(group) >= _GROUP:
            write(group)
            group = []
    for cid in batch.requests:
        if cid not in seen and (unit := unit_of(cid)) is not None:
            group.append((unit, BatchFailure("missing", "no result returned by the batch")))
    write(group)
    with write_session(engine) as s:
        row = s.get(JudgeBatch, batch.id)
        row.status, row.collected_at = "ended", utcnow()
        row.ended_at = row.ended_at or utcnow()
        s.add(row)


async def collect_batches(engine: Engine, provider: Provider, prices: PriceTable, *,
                          config_hash: str | None = None, wait: bool = False,
                          poll: float = 60.0, cancel: bool = False,
                          options: RunOptions = RunOptions(),
                          say: Callable[[str], None] = lambda _m: None) -> CollectReport:
    """Store the results of every ended batch; with ``wait``, poll until all have ended."""
    bp = require_batches(provider)
    report = CollectReport()
    batches = open_batches(engine, config_hash)
    if cancel:
        for b in batches:
            await retrying(lambda b=b: bp.cancel_batch(b.provider_batch_id), options)
            say(f"Asked to cancel batch {b.provider_batch_id}")
    while batches:
        still: list[JudgeBatch] = []
        for b in batches:
            info = await retrying(lambda b=b: bp.batch_status(b.provider_batch_id), options)
            if not info.ended:
                still.append(b)
                with write_session(engine) as s:
                    row = s.get(JudgeBatch, b.id)
                    row.status = info.status
                    s.add(row)
                continue
            await _store_results(engine, b, bp, prices, report)
            report.collected.append(b.provider_batch_id)
            say(f"Collected batch {b.provider_batch_id}: {info.counts.get('succeeded', 0)} "
                f"succeeded, {info.counts.get('errored', 0)} errored, "
                f"{info.counts.get('expired', 0)} expired, "
                f"{info.counts.get('canceled', 0)} canceled")
        batches = still
        if not batches or not wait:
            break
        say(f"{len(batches)} batch(es) still processing; checking again in {poll:g} s")
        await asyncio.sleep(poll)
    report.pending = [(b.provider_batch_id, {}) for b in batches]
    return report

"""Judging a configuration's items again, to see whether the judge changed under its name
(`h2h calibrate drift`; the statistics are :mod:`analysis.drift`).

A *check* is a seeded sample of items the configuration already scored (and whose content
has not changed since), judged again with exactly the stored configuration - the same prompt,
the same parameters. Each re-judgment is stored in ``drift_judgment`` as it arrives, with its
cost-ledger entry (call kind ``drift``); a check killed half-way is continued by the next run
with the same seed and sample size, and a finished one is kept (the next run starts a new
check: drift is about time).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session, upsert_statement, write_connection, write_session
from data.models import AttentionCheck, DriftCheck, DriftJudgment, Item, Judgment, utcnow
from data.study import rubric_by_version

from .calls import RunOptions, RunStats, Tally, run_calls
from .config import JudgeSpec
from .judging import ItemView, JudgePlan, JudgeSink, JudgeUnit
from .prices import PriceTable
from .progress import RunProgress
from .providers.base import Provider, ProviderError, Reply
from .store import insert_ledger, stored_output_form

__all__ = ["sample_items", "open_check", "plan_check", "DriftSink", "run_check",
           "old_and_new", "finish_check"]


def sample_items(engine: Engine, spec: JudgeSpec, n: int, seed: int) -> list[str]:
    """``n`` items the configuration scored (sample 0) whose content is unchanged since,
    drawn with ``seed`` from them in id order - the same items every time."""
    with read_session(engine) as s:
        judged = s.exec(select(Judgment.item_id, Judgment.item_hash).where(
            Judgment.config_hash == spec.hash, Judgment.sample == 0,
            Judgment.score.is_not(None))).all()
        current = dict(s.exec(select(Item.id, Item.content_hash)).all())
        checks = set(s.exec(select(AttentionCheck.item_id)).all())
    ok = sorted({i for i, h in judged if current.get(i) == h and i not in checks})
    return sorted(random.Random(seed).sample(ok, min(n, len(ok))))


def open_check(engine: Engine, spec: JudgeSpec, seed: int, n: int) -> DriftCheck:
    """The unfinished check of this configuration with this seed and size, else a new one."""
    with write_session(engine) as s:
        row = s.exec(select(DriftCheck).where(
            DriftCheck.config_hash == spec.hash, DriftCheck.seed == seed,
            DriftCheck.n_items == n, DriftCheck.finished_at.is_(None))
            .order_by(DriftCheck.id.desc())).first()
        if row is None:
            row = DriftCheck(config_hash=spec.hash, seed=seed, n_items=n)
            s.add(row)
            s.flush()
        s.expunge(row)
        return row


def plan_check(engine: Engine, spec: JudgeSpec, check: DriftCheck, items: list[str]
               ) -> JudgePlan:
    """The calls still needed: each sampled item on the dimensions it was scored on, less
    what the check already stored (a request failure is asked again)."""
    with read_session(engine) as s:
        scored = s.exec(select(Judgment.item_id, Judgment.dimension).where(
            Judgment.config_hash == spec.hash, Judgment.sample == 0,
            Judgment.score.is_not(None), Judgment.item_id.in_(items))).all()
        done = set(s.exec(select(DriftJudgment.item_id, DriftJudgment.dimension).where(
            DriftJudgment.check_id == check.id,
            DriftJudgment.outcome != "request_failed")).all())
        rows = s.exec(select(Item.id, Item.task, Item.context, Item.response,
                             Item.content_hash).where(Item.id.in_(items))).all()
    rubric = rubric_by_version(engine, spec.rubric_version)
    order = [d.key for d in rubric.dimensions]
    dims: dict[str, list[str]] = {}
    for iid, dim in scored:
        dims.setdefault(iid, []).append(dim)
    plan = JudgePlan(spec=spec, rubric=rubric, items={r[0]: ItemView(*r) for r in rows},
                     units=[])
    for iid in sorted(dims):
        ask = tuple(sorted(dims[iid], key=order.index))
        todo = tuple(d for d in ask if (iid, d) not in done)
        plan.total_keys += len(ask)
        plan.done_keys += len(ask) - len(todo)
        if not todo:
            continue
        if spec.all_mode:
            plan.units.append(JudgeUnit(iid, ask, todo, 0))
        else:
            plan.units += [JudgeUnit(iid, (d,), (d,), 0) for d in todo]
    return plan


_KEY = ("check_id", "item_id", "dimension")


class DriftSink(JudgeSink):
    """Stores each re-judgment in ``drift_judgment`` (not in the configuration's judgments)."""

    def __init__(self, engine: Engine, plan: JudgePlan, prices, check_id: int):
        super().__init__(engine, plan, prices)
        self.check_id = check_id

    def ledger(self, unit: JudgeUnit, status: str, usage=None, cost: float | None = 0.0,
               seconds: float | None = None) -> dict[str, Any]:
        row = super().ledger(unit, status, usage, cost, seconds)
        return {**row, "call_kind": "drift"}

    def _store(self, conn: sa.Connection, rows: list[dict[str, Any]]) -> None:
        now = utcnow()
        values = [{"check_id": self.check_id, "item_id": r["item_id"],
                   "item_hash": r["item_hash"], "dimension": r["dimension"],
                   "score": r["score"], "outcome": r["outcome"],
                   "unscored_reason": r["unscored_reason"], "raw_reply": r["raw_reply"],
                   "created_at": now} for r in rows]
        if values:
            conn.execute(upsert_statement(
                DriftJudgment.__table__, conn.dialect.name, _KEY, tuple(values[0]),
                lambda stored, _new: stored.outcome == "request_failed"), values)

    def succeeded(self, unit: JudgeUnit, reply: Reply) -> Tally:
        rows, tally = self.rows_for(unit, reply)
        u = reply.usage
        tally.cost = self.prices.cost_of(self.spec.model, u, provider=self.spec.provider)
        status = "ok" if not tally.unscored else "unscored answer"
        with write_connection(self.engine) as conn:
            self._store(conn, rows)
            insert_ledger(conn, [self.ledger(unit, status, u, tally.cost, reply.seconds)])
        return tally

    def gave_up(self, unit: JudgeUnit, err: ProviderError) -> Tally:
        with write_connection(self.engine) as conn:
            self._store(conn, self.failure_rows(unit, f"{err.message} (asked again on the "
                                                      "next run)"))
        return Tally(failed=len(unit.store), reasons=Counter({"request": len(unit.store)}))


def run_check(engine: Engine, plan: JudgePlan, check_id: int, provider: Provider,
              prices: PriceTable, options: RunOptions = RunOptions(),
              show_progress: bool = False) -> RunStats:
    """Ask what the check still lacks (see :func:`plan_check`), storing each answer."""
    from .run import run_async

    async def go() -> RunStats:
        try:
            await provider.preflight()
            provider.start_from(stored_output_form(engine, plan.spec.hash))
            sink = DriftSink(engine, plan, prices, check_id)
            with RunProgress(f"{plan.spec.display_name} (drift)", len(plan.units),
                             enabled=show_progress) as progress:
                return await run_calls(provider, plan.units, sink, options, progress)
        finally:
            await provider.aclose()

    if not plan.units:
        return RunStats()
    return run_async(go())


def old_and_new(engine: Engine, spec: JudgeSpec, check_id: int) -> list[tuple]:
    """(item, dimension, old score, new score) of the check; a score None when unscored."""
    with read_session(engine) as s:
        new = s.exec(select(DriftJudgment.item_id, DriftJudgment.dimension,
                            DriftJudgment.score).where(
            DriftJudgment.check_id == check_id)).all()
        old = {(i, d): v for i, d, v in s.exec(select(
            Judgment.item_id, Judgment.dimension, Judgment.score).where(
            Judgment.config_hash == spec.hash, Judgment.sample == 0)).all()}
    return [(i, d, old.get((i, d)), v) for i, d, v in sorted(new)]


def finish_check(engine: Engine, check_id: int) -> bool:
    """Mark the check finished when every re-judgment is stored (no request failure left)."""
    with write_session(engine) as s:
        failed = s.exec(select(sa.func.count()).select_from(DriftJudgment).where(
            DriftJudgment.check_id == check_id,
            DriftJudgment.outcome == "request_failed")).one()
        row = s.get(DriftCheck, check_id)
        if failed or row is None:
            return False
        if row.finished_at is None:
            row.finished_at = utcnow()
            s.add(row)
        return True

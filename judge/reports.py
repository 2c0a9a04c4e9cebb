"""What the judge tables say: cost per configuration, and judgments as the judges CSV.

The judges CSV is the long layout ``h2h analyze --judges`` reads: ``item_id, judge, dimension,
score, sample`` plus ``config``, ``outcome`` and ``unscored_reason``. An unscored judgment has an
empty score, so the analysis counts it (``n_unscored``) instead of losing it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session
from data.migrate import ensure_current
from data.models import (
    PAIRWISE_MODES,
    CostEntry,
    GenerationConfigRow,
    Item,
    JudgeConfigRow,
    Judgment,
)

__all__ = ["CostLine", "cost_summary", "union_seconds", "export_judgments_csv",
           "JUDGES_CSV_COLUMNS"]

JUDGES_CSV_COLUMNS = ("item_id", "judge", "dimension", "score", "sample", "config", "outcome",
                      "unscored_reason")
_ANSWERED = {"ok", "unscored answer", "empty reply"}


@dataclass
class CostLine:
    """One configuration's calls, tokens and cost (``cost`` covers the priced calls only)."""

    name: str
    kind: str
    config_hash: str
    provider: str
    model: str
    calls: int = 0
    batch_calls: int = 0
    failed_attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0
    #: wall time: the union of the attempts' intervals (calls in flight together count once;
    #: recorded since schema 0005)
    seconds: float = 0.0
    #: the answered calls' own times added up (what the calls would take one after another)
    call_seconds: float = 0.0


def union_seconds(intervals: Sequence[tuple[float, float]]) -> float:
    """The length of the union of ``(start, end)`` intervals: the wall time of calls that
    overlapped counts once.

    >>> union_seconds([(0, 10), (5, 12), (20, 21)])
    13.0
    """
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return float(total)


def _wall_times(s, config_hashes: Sequence[str] | None) -> dict[str, float]:
    """Per configuration, the union of its attempts' intervals ``[end - seconds, end]`` (an
    attempt is stored when it ends)."""
    q = select(CostEntry.config_hash, CostEntry.created_at, CostEntry.seconds).where(
        CostEntry.seconds.is_not(None))
    if config_hashes is not None:
        q = q.where(CostEntry.config_hash.in_(list(config_hashes)))
    spans: dict[str, list[tuple[float, float]]] = {}
    for h, at, secs in s.exec(q):
        end = at.timestamp()
        spans.setdefault(h, []).append((end - secs, end))
    return {h: union_seconds(v) for h, v in spans.items()}


def cost_summary(engine: Engine, config_hashes: Sequence[str] | None = None) -> list[CostLine]:
    """The ledger summed per configuration (judges and generators), oldest first."""
    ensure_current(engine)
    with read_session(engine) as s:
        names: dict[str, tuple[str, str]] = {}
        for r in s.exec(select(JudgeConfigRow)):
            names[r.hash] = (r.name, "pairwise judge" if r.mode in PAIRWISE_MODES else "judge")
        for r in s.exec(select(GenerationConfigRow)):
            names[r.hash] = (r.name, "generate")
        q = select(CostEntry.config_hash, CostEntry.provider, CostEntry.model, CostEntry.status,
                   CostEntry.batch, func.count(), func.sum(CostEntry.input_tokens),
                   func.sum(CostEntry.output_tokens), func.sum(CostEntry.cache_write_tokens),
                   func.sum(CostEntry.cache_read_tokens), func.sum(CostEntry.cost_usd),
                   func.count(CostEntry.cost_usd), func.min(CostEntry.id),
                   func.sum(CostEntry.seconds))
        if config_hashes is not None:
            q = q.where(CostEntry.config_hash.in_(list(config_hashes)))
        rows = s.exec(q.group_by(CostEntry.config_hash, CostEntry.provider, CostEntry.model,
                                 CostEntry.status, CostEntry.batch)).all()
        walls = _wall_times(s, config_hashes)
    lines: dict[str, CostLine] = {}
    first: dict[str, int] = {}
    for h, prov, model, status, batch, n, i, o, cw, cr, usd, n_priced, first_id, secs in rows:
        name, kind = names.get(h, (h[:8], "?"))
        line = lines.setdefault(h, CostLine(name, kind, h, prov, model))
        first[h] = min(first.get(h, first_id), first_id)
        if status in _ANSWERED:
            line.calls += n
            line.call_seconds += secs or 0.0
            line.batch_calls += n if batch else 0
            line.unpriced_calls += n - n_priced
        else:
            line.failed_attempts += n
        line.input_tokens += i or 0
        line.output_tokens += o or 0
        line.cache_write_tokens += cw or 0
        line.cache_read_tokens += cr or 0
        line.cost += usd or 0.0
    for h, line in lines.items():
        line.seconds = walls.get(h, 0.0)
    return sorted(lines.values(), key=lambda ln: first[ln.config_hash])


def export_judgments_csv(engine: Engine, config_hashes: Sequence[str] | None = None, *,
                         label: str = "name") -> tuple[str, int, int]:
    """The judges CSV text, the number of rows and how many of them are unscored.

    ``label`` names each judge by its configuration ``name`` or its ``hash``.
    """
    ensure_current(engine)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(JUDGES_CSV_COLUMNS)
    n = unscored = 0
    with read_session(engine) as s:
        q = (select(Judgment, JudgeConfigRow.name, Item.position)
             .join(JudgeConfigRow, JudgeConfigRow.hash == Judgment.config_hash)
             .join(Item, Item.id == Judgment.item_id))
        if config_hashes is not None:
            q = q.where(Judgment.config_hash.in_(list(config_hashes)))
        q = q.order_by(Item.position, JudgeConfigRow.name, Judgment.dimension, Judgment.sample)
        for j, name, _pos in s.exec(q):
            score = "" if j.score is None else f"{j.score:g}"
            unscored += j.score is None
            n += 1
            w.writerow([j.item_id, name if label == "name" else j.config_hash, j.dimension,
                        score, j.sample, j.config_hash, j.outcome, j.unscored_reason or ""])
    return buf.getvalue(), n, unscored

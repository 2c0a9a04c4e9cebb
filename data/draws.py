"""Storing and reading active-labelling draws (tables ``active_draw``, ``active_draw_item``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import select

from .engine import read_session, write_session
from .models import ActiveDraw, ActiveDrawItem, utcnow

__all__ = ["StoredDraw", "save_draw", "load_draws"]


@dataclass(frozen=True)
class StoredDraw:
    id: int
    seed: int
    budget: int
    halfwidth: float
    rated_before: Mapping[str, float]
    probability: Mapping[str, float]
    picked: frozenset[str]
    created_at: str


def save_draw(engine: Engine, config_hash: str, *, seed: int, budget: int, halfwidth: float,
              rated_before: Mapping[str, float], probability: Mapping[str, float],
              picked: Sequence[str]) -> int:
    """Store a draw in one transaction; returns its id."""
    chosen = set(picked)
    with write_session(engine) as s:
        draw = ActiveDraw(config_hash=config_hash, seed=seed, budget=budget,
                          halfwidth=halfwidth, rated_before=dict(rated_before),
                          created_at=utcnow())
        s.add(draw)
        s.flush()
        rows = [{"draw_id": draw.id, "item_id": i, "probability": float(p),
                 "picked": i in chosen} for i, p in probability.items()]
        for k in range(0, len(rows), 5000):
            s.execute(sa.insert(ActiveDrawItem), rows[k:k + 5000])
        return int(draw.id)


def load_draws(engine: Engine, config_hash: str) -> list[StoredDraw]:
    """A configuration's draws, oldest first."""
    with read_session(engine) as s:
        draws = s.exec(select(ActiveDraw).where(ActiveDraw.config_hash == config_hash)
                       .order_by(ActiveDraw.id)).all()
        out = []
        for d in draws:
            rows = s.exec(select(ActiveDrawItem.item_id, ActiveDrawItem.probability,
                                 ActiveDrawItem.picked)
                          .where(ActiveDrawItem.draw_id == d.id)).all()
            out.append(StoredDraw(int(d.id), d.seed, d.budget, d.halfwidth,
                                  dict(d.rated_before), {i: p for i, p, _ in rows},
                                  frozenset(i for i, _, k in rows if k),
                                  d.created_at.isoformat(timespec="seconds")))
    return out

"""The study's calibration split, the auto-calibration searches, and which items a judge
configuration may be held against (`h2h calibrate auto`, migration 0014).

**The split** is made once per study, by scenario and seeded (the assignment itself is
:func:`analysis.heldout.split_scenarios`), and stored: every later search, the Calibration page
and the report read the same frozen test part. A scenario rated for the first time after the
split is in no part (the test part does not grow behind the researcher's back); the output
says how many.

**Contamination.** A configuration whose prompt shows human-scored exemplars has seen those
items' human scores: :func:`held_against_items` is the one rule for every judge-vs-human
statistic, leaderboard and estimate of a configuration - its exemplar items are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from .engine import read_session, write_session
from .models import (
    SPLIT_PARTS,
    AttentionCheck,
    Autocalibration,
    CalibrationSplit,
    Item,
    JudgeConfigRow,
    Rating,
    utcnow,
)

__all__ = ["StoredSplit", "rated_items", "stored_split", "save_split", "exemplar_items",
           "held_against_items", "record_search", "searches", "search_of",
           "search_candidates"]


@dataclass(frozen=True)
class StoredSplit:
    """The study's split: each scenario's part, and the seed it was drawn with."""

    seed: int
    parts: Mapping[str, str]

    def items(self, rated: Mapping[str, tuple[str, str]]) -> dict[str, list[str]]:
        """The rated items of each part (``rated``: item -> (scenario, task)), sorted."""
        out: dict[str, list[str]] = {p: [] for p in SPLIT_PARTS}
        for iid, (scenario, _task) in sorted(rated.items()):
            part = self.parts.get(scenario)
            if part is not None:
                out[part].append(iid)
        return out

    def unplaced(self, rated: Mapping[str, tuple[str, str]]) -> set[str]:
        """Rated scenarios that are in no part (rated after the split was made)."""
        return {sc for sc, _ in rated.values() if sc not in self.parts}


def rated_items(engine: Engine, min_humans: int = 2) -> dict[str, tuple[str, str]]:
    """Items rated by at least ``min_humans`` humans (on any dimension), attention checks
    left out: item -> (scenario, task family)."""
    with read_session(engine) as s:
        n = s.exec(select(Rating.item_id, func.count(func.distinct(Rating.rater_id)))
                   .where(Rating.score.is_not(None)).group_by(Rating.item_id)).all()
        checks = set(s.exec(select(AttentionCheck.item_id)).all())
        items = {i: (sc or i, t) for i, sc, t in s.exec(select(Item.id, Item.scenario,
                                                               Item.task)).all()}
    return {i: items[i] for i, k in n if k >= min_humans and i in items and i not in checks}


def stored_split(engine: Engine) -> StoredSplit | None:
    with read_session(engine) as s:
        rows = s.exec(select(CalibrationSplit)).all()
    if not rows:
        return None
    return StoredSplit(rows[0].seed, {r.scenario: r.part for r in rows})


def save_split(engine: Engine, seed: int, parts: Mapping[str, str]) -> StoredSplit:
    """Store the study's split - unless one was stored meanwhile (then that one is
    returned: a study has one split)."""
    bad = sorted({p for p in parts.values() if p not in SPLIT_PARTS})
    if bad:
        raise ValueError(f"unknown split part(s): {bad}")
    with write_session(engine) as s:
        if not s.exec(select(func.count()).select_from(CalibrationSplit)).one():
            now = utcnow()
            for scenario, part in sorted(parts.items()):
                s.add(CalibrationSplit(scenario=scenario, part=part, seed=seed,
                                       created_at=now))
    got = stored_split(engine)
    assert got is not None
    return got


def _exemplar_ids(doc: Mapping[str, Any] | None) -> frozenset[str]:
    if not doc:
        return frozenset()
    return frozenset(i for ids in (doc.get("by_dimension") or {}).values() for i in ids)


def exemplar_items(engine: Engine) -> dict[str, frozenset[str]]:
    """Each configuration with exemplars in its prompt, by hash: the items that can appear
    as exemplars (its contaminated items)."""
    with read_session(engine) as s:
        rows = s.exec(select(JudgeConfigRow.hash, JudgeConfigRow.exemplars)
                      .where(JudgeConfigRow.exemplars.is_not(None))).all()
    return {h: ids for h, doc in rows if (ids := _exemplar_ids(doc))}


def held_against_items(engine: Engine, config_hash: str, items: Iterable[str]
                       ) -> tuple[list[str], int]:
    """The items of ``items`` that configuration ``config_hash`` may be held against - every
    one but those that served as exemplars in its own prompt - and how many were left out.

    The one rule for judge-vs-human statistics, leaderboards and estimates of a configuration
    (a function deciding a configuration's item set elsewhere calls this one)."""
    with read_session(engine) as s:
        doc = s.exec(select(JudgeConfigRow.exemplars)
                     .where(JudgeConfigRow.hash == config_hash)).first()
    seen = _exemplar_ids(doc)
    items = list(items)
    kept = [i for i in items if i not in seen]
    return kept, len(items) - len(kept)


def record_search(engine: Engine, *, config_hash: str, base_hash: str, seed: int,
                  settings: Mapping[str, Any], candidates: list, selected: str,
                  test: Mapping[str, Any]) -> int:
    """Store one auto-calibration search (or find the same one stored before: same base,
    seed, settings and selection), returning its id."""
    with write_session(engine) as s:
        for row in s.exec(select(Autocalibration).where(
                Autocalibration.base_hash == base_hash, Autocalibration.seed == seed,
                Autocalibration.config_hash == config_hash)).all():
            if row.settings == dict(settings):
                row.candidates, row.test, row.selected = candidates, dict(test), selected
                s.add(row)
                return int(row.id)  # type: ignore[arg-type]
        row = Autocalibration(config_hash=config_hash, base_hash=base_hash, seed=seed,
                              settings=dict(settings), candidates=candidates,
                              selected=selected, test=dict(test))
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


def searches(engine: Engine) -> list[Autocalibration]:
    """Every auto-calibration search, oldest first."""
    with read_session(engine) as s:
        return list(s.exec(select(Autocalibration).order_by(Autocalibration.id)).all())


def search_of(engine: Engine, config_hash: str) -> Autocalibration | None:
    """The latest search that selected configuration ``config_hash``."""
    with read_session(engine) as s:
        return s.exec(select(Autocalibration).where(
            Autocalibration.config_hash == config_hash).order_by(
            Autocalibration.id.desc())).first()


def search_candidates(engine: Engine) -> set[str]:
    """Hashes of configurations that were only ever candidates of a search (judged on the dev
    part alone): neither selected nor a base. Analyses of the study leave them out."""
    cands: set[str] = set()
    kept: set[str] = set()
    for row in searches(engine):
        kept |= {row.config_hash, row.base_hash}
        cands |= {c["hash"] for c in row.candidates}
    return cands - kept

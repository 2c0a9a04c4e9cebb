"""Importing items and ratings, all-or-nothing, and exporting items (ratings: exports.py).

A file is validated completely before anything is written, and the writes happen in one
transaction: a bad file leaves the study exactly as it was. Re-importing the same file changes
nothing; a changed item or rating under an existing key is an error unless ``update=True``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from messages import Msg

from .engine import read_session, write_session
from .errors import FormatError, Problem
from .items import ItemRecord, item_hash
from .migrate import ensure_current
from .models import Item, Rater, Rating, RatingRevision, utcnow
from .ratings import NO_FLAGS_SOURCE, RatingRecord
from .study import current_rubric_in

__all__ = ["ImportResult", "import_item_records", "import_rating_records", "export_items",
           "item_tasks", "study_tasks", "item_to_record"]


@dataclass(frozen=True)
class ImportResult:
    added: int
    unchanged: int
    updated: int

    def message(self) -> Msg:
        return Msg("{added} added, {updated} updated, {unchanged} unchanged", added=self.added,
                   updated=self.updated, unchanged=self.unchanged)

    def __str__(self) -> str:
        return str(self.message())


def study_tasks(engine: Engine) -> tuple[str, ...]:
    ensure_current(engine)
    with read_session(engine) as s:
        return current_rubric_in(s).tasks


def item_tasks(engine: Engine) -> dict[str, str]:
    with read_session(engine) as s:
        return dict(s.exec(select(Item.id, Item.task)).all())


def import_item_records(engine: Engine, records: list[ItemRecord], *, file: str,
                        update: bool = False) -> ImportResult:
    """Store validated item records in one transaction."""
    ensure_current(engine)
    added = unchanged = updated = 0
    with write_session(engine) as s:
        ids = [r.id for r in records]
        existing: dict[str, Item] = {}
        for chunk in _chunks(ids, 500):
            for it in s.exec(select(Item).where(Item.id.in_(chunk))).all():
                existing[it.id] = it
        conflicts = []
        for rec in records:
            old = existing.get(rec.id)
            if old is not None and old.content_hash != item_hash(rec.stored()) and not update:
                conflicts.append(Problem(file, rec.line, "id",
                                         Msg("item '{id}' already exists with different content; "
                                             "re-import with --update to replace it", id=rec.id)))
        if conflicts:
            raise FormatError(conflicts)
        next_pos = (s.exec(select(func.max(Item.position))).one() or 0) + 1
        now = utcnow()
        for rec in records:
            d = rec.stored()
            h = item_hash(d)
            old = existing.get(rec.id)
            if old is None:
                s.add(Item(id=rec.id, task=d["task"], scenario=d["scenario"],
                           context=d["context"], response=d["response"], model=d["model"],
                           condition=d["condition"], reference=d["reference"],
                           meta=d["metadata"], content_hash=h, position=next_pos,
                           created_at=now, updated_at=now))
                next_pos += 1
                added += 1
            elif old.content_hash == h:
                unchanged += 1
            else:
                for k in ("task", "scenario", "context", "response", "model", "condition",
                          "reference"):
                    setattr(old, k, d[k])
                old.meta = d["metadata"]
                old.content_hash = h
                old.updated_at = now
                s.add(old)
                updated += 1
    return ImportResult(added, unchanged, updated)


def import_rating_records(engine: Engine, records: list[RatingRecord], *, file: str,
                          update: bool = False, source: str = "import",
                          simulated: bool = False) -> ImportResult:
    """Store validated rating rows; unknown rater names become raters without a code."""
    ensure_current(engine)
    added = unchanged = updated = 0
    with write_session(engine) as s:
        version = current_rubric_in(s).version
        raters = {r.name: r for r in s.exec(select(Rater)).all()}
        for name in sorted({r.rater for r in records} - set(raters)):
            rater = Rater(name=name, role="rater", code_hash=None, active=True,
                          simulated=simulated)
            s.add(rater)
            raters[name] = rater
        s.flush()
        rater_ids = {r.rater for r in records}
        existing: dict[tuple[int, str, str], Rating] = {}
        for name in sorted(rater_ids):  # locked like the app's saves: no update is lost
            for rt in s.exec(select(Rating).where(Rating.rater_id == raters[name].id)
                             .order_by(Rating.item_id, Rating.dimension)
                             .with_for_update()).all():
                existing[(rt.rater_id, rt.item_id, rt.dimension)] = rt
        conflicts = []
        for rec in records:
            old = existing.get((raters[rec.rater].id, rec.item_id, rec.dimension))
            if old is not None and not _same(old, rec) and not update:
                conflicts.append(Problem(file, rec.line, "score", Msg(
                    "'{rater}' already rated item '{item_id}' on '{dimension}' differently; "
                    "re-import with --update to replace it", rater=rec.rater,
                    item_id=rec.item_id, dimension=rec.dimension)))
        if conflicts:
            raise FormatError(conflicts)
        now = utcnow()
        changed: list[Rating] = []
        for rec in records:
            rid = raters[rec.rater].id
            old = existing.get((rid, rec.item_id, rec.dimension))
            if old is not None and _same(old, rec):
                unchanged += 1
                continue
            if old is None:
                rating = Rating(rater_id=rid, item_id=rec.item_id, dimension=rec.dimension,
                                score=rec.score, comment=rec.comment,
                                flags=list(rec.flags or ()), rubric_version=version,
                                source=source if rec.flags is not None else NO_FLAGS_SOURCE,
                                created_at=now, updated_at=now)
                added += 1
            else:
                rating = old
                rating.score, rating.comment = rec.score, rec.comment
                if rec.flags is not None:  # a file without flags keeps the stored ones
                    rating.flags = list(rec.flags)
                rating.updated_at = now
                rating.rubric_version = version
                updated += 1
            s.add(rating)
            changed.append(rating)
        # one flush for every rating (the new ones' ids come back in batched INSERTs), then
        # their revisions: a flush per row made 9,000 ratings take 20 s
        s.flush()
        s.add_all([RatingRevision(rating_id=r.id, score=r.score, comment=r.comment,
                                  flags=list(r.flags), rubric_version=version, changed_at=now)
                   for r in changed])
    return ImportResult(added, unchanged, updated)


def _same(old: Rating, rec: RatingRecord) -> bool:
    return (old.score == rec.score and (old.comment or "") == rec.comment
            and (rec.flags is None or tuple(old.flags or ()) == rec.flags))


def _chunks(seq: list, n: int) -> Iterable[list]:
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


def item_to_record(it: Item) -> dict[str, Any]:
    return {"id": it.id, "task": it.task, "scenario": it.scenario, "context": it.context,
            "response": it.response, "model": it.model, "condition": it.condition,
            "reference": it.reference, "metadata": it.meta}


def export_items(engine: Engine) -> str:
    """All items as JSON Lines in import order (re-importable unchanged)."""
    ensure_current(engine)
    with read_session(engine) as s:
        rows = s.exec(select(Item).order_by(Item.position, Item.id)).all()
        return "".join(json.dumps(item_to_record(it), ensure_ascii=False) + "\n" for it in rows)

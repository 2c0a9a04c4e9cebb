"""Importing items and ratings, all-or-nothing, and exporting items (ratings: exports.py).

A file is validated completely before anything is written, and the writes happen in one
transaction: a bad file leaves the study exactly as it was. Re-importing the same file changes
nothing; a changed item or rating under an existing key is an error unless ``update=True``.

Items are **streamed**: the file is read one line at a time, each record validated and put
in a private staging table (a temporary SQLite file, not the study), where repeated ids are
found; only a file without a problem is then written to the study, in chunks, in one
transaction. Memory stays flat whatever the file's size (a 232,500-item file of 76 MB: see
``benchmarks/bench_import_memory.py``), and the study is not locked while the file is read.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from messages import Msg, join_msgs, nMsg

from ._files import Limits, open_file
from .engine import read_session, write_session
from .errors import FormatError, Problem
from .items import ItemRecord, duplicate_id, item_hash, iter_item_file
from .migrate import ensure_current
from .models import AttentionCheck, Item, Rater, Rating, RatingRevision, utcnow
from .ratings import NO_FLAGS_SOURCE, RatingRecord
from .study import current_rubric_in

__all__ = ["ImportResult", "import_item_records", "import_items_file", "import_item_stream",
           "import_rating_records", "export_items", "item_tasks", "study_tasks",
           "item_to_record", "MAX_PROBLEMS"]

MAX_PROBLEMS = 1000
"""Problems kept for the message of a rejected file; the rest are counted (a file that is
not an item file at all would otherwise have one per line, in memory)."""
_CHUNK = 2000  # rows per statement into the study


@dataclass(frozen=True)
class ImportResult:
    added: int
    unchanged: int
    updated: int
    raters_added: tuple[str, ...] = ()
    """Raters created by a ratings import (``add_raters``), by name."""

    def message(self) -> Msg:
        head = Msg("{added} added, {updated} updated, {unchanged} unchanged", added=self.added,
                   updated=self.updated, unchanged=self.unchanged)
        if not self.raters_added:
            return head
        names = ", ".join(self.raters_added[:10]) + (", ..." if len(self.raters_added) > 10
                                                     else "")
        return join_msgs("; ", [head, nMsg("{n} rater added ({names})",
                                           "{n} raters added ({names})",
                                           len(self.raters_added), names=names)])

    def __str__(self) -> str:
        return str(self.message())


def study_tasks(engine: Engine) -> tuple[str, ...]:
    ensure_current(engine)
    with read_session(engine) as s:
        return current_rubric_in(s).tasks


def item_tasks(engine: Engine) -> dict[str, str]:
    with read_session(engine) as s:
        return dict(s.exec(select(Item.id, Item.task)).all())


def import_item_records(engine: Engine, records: Iterable[ItemRecord], *, file: str,
                        update: bool = False) -> ImportResult:
    """Store validated item records in one transaction (see :func:`import_item_stream`)."""
    return import_item_stream(engine, records, file=file, update=update)


def import_items_file(engine: Engine, path: str | Path, *, update: bool = False,
                      limits: Limits | None = None) -> ImportResult:
    """Import an item file (JSON Lines, or CSV by its ``.csv`` name), streamed: see the
    module. Refused whole, nothing written, with every problem's file, line and field."""
    tasks = study_tasks(engine)
    name, fh = open_file(path, limits)
    with fh:
        return import_item_stream(engine, iter_item_file(fh, name, tasks, limits=limits),
                                  file=name, update=update)


class _Problems:
    """The problems of one file, kept up to :data:`MAX_PROBLEMS` (the rest counted)."""

    def __init__(self, file: str):
        self.file, self.kept, self.more = file, [], 0

    def add(self, p: Problem) -> None:
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(p)
        else:
            self.more += 1

    def __bool__(self) -> bool:
        return bool(self.kept)

    def error(self) -> FormatError:
        found = sorted(self.kept, key=lambda p: p.line or 0)
        if self.more:
            found.append(Problem(self.file, None, None, Msg(
                "and {n} more problems not listed", n=self.more)))
        return FormatError(found)


class _Staging:
    """Validated records in a private temporary SQLite file, in the file's order."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="h2h-import-"))
        self.db = sqlite3.connect(self.folder / "staging.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("CREATE TABLE staging (line INTEGER, id TEXT, hash TEXT, record TEXT)")
        self.db.execute("BEGIN")
        self.batch: list[tuple] = []
        self.count = 0

    def add(self, rec: ItemRecord) -> None:
        d = rec.stored()
        self.batch.append((rec.line, rec.id, item_hash(d),
                           json.dumps(d, ensure_ascii=False, separators=(",", ":"))))
        self.count += 1
        if len(self.batch) >= _CHUNK:
            self.flush()

    def flush(self) -> None:
        if self.batch:
            self.db.executemany("INSERT INTO staging VALUES (?, ?, ?, ?)", self.batch)
            self.batch = []

    def repeated(self, file: str) -> Iterator[Problem]:
        """Every record whose id came earlier in the file."""
        self.flush()
        yield from (duplicate_id(file, line, item_id, first) for line, item_id, first in
                    self.db.execute(
                        "SELECT s.line, s.id, f.first FROM staging s JOIN (SELECT id, "
                        "MIN(rowid) AS r, MIN(line) AS first FROM staging GROUP BY id "
                        "HAVING COUNT(*) > 1) f ON f.id = s.id AND s.rowid > f.r "
                        "ORDER BY s.rowid"))

    def chunks(self) -> Iterator[list[tuple]]:
        self.flush()
        cur = self.db.execute("SELECT line, id, hash, record FROM staging ORDER BY rowid")
        while rows := cur.fetchmany(_CHUNK):
            yield rows

    def close(self) -> None:
        self.db.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def import_item_stream(engine: Engine, records: Iterable[ItemRecord | Problem], *,
                       file: str, update: bool = False) -> ImportResult:
    """Store a stream of validated records (problems from the reader may come among them:
    then nothing is stored and every problem is raised as one :class:`FormatError`).

    All-or-nothing: the records are staged privately first (repeated ids are problems too),
    then written to the study in one transaction — new items appended in the file's order,
    unchanged ones counted, changed ones an error unless ``update``."""
    ensure_current(engine)
    problems = _Problems(file)
    stage = _Staging()
    try:
        try:
            for r in records:
                if isinstance(r, Problem):
                    problems.add(r)
                elif not problems:  # after a problem: only look for more
                    stage.add(r)
        except FormatError as exc:  # the reader cannot go on (an undecodable line …)
            for p in exc.problems:
                problems.add(p)
        for p in stage.repeated(file) if not problems else ():
            problems.add(p)
        if problems:
            raise problems.error()
        return _write_items(engine, stage, problems, update)
    finally:
        stage.close()


_ITEMS = Item.__table__
_UPDATE_ITEM = (sa.update(_ITEMS).where(_ITEMS.c.id == sa.bindparam("b_id"))
                .values({c: sa.bindparam(f"b_{c}") for c in (
                    "task", "scenario", "context", "response", "model", "condition",
                    "reference", "metadata", "content_hash", "updated_at")}))


def _write_items(engine: Engine, stage: _Staging, problems: _Problems,
                 update: bool) -> ImportResult:
    added = unchanged = updated = 0
    with write_session(engine) as s:
        c = s.connection()
        next_pos = (c.execute(sa.select(func.max(_ITEMS.c.position))).scalar() or 0) + 1
        now = utcnow()
        for rows in stage.chunks():
            ids = [r[1] for r in rows]
            stored = dict(c.execute(sa.select(_ITEMS.c.id, _ITEMS.c.content_hash)
                                    .where(_ITEMS.c.id.in_(ids))).all())
            new, changed = [], []
            for line, item_id, h, text in rows:
                old = stored.get(item_id)
                if old == h:
                    unchanged += 1
                    continue
                if old is not None and not update:
                    problems.add(Problem(problems.file, line, "id", Msg(
                        "item '{id}' already exists with different content; re-import with "
                        "--update to replace it", id=item_id)))
                    continue
                if problems:  # the file is refused: only look for more conflicts
                    continue
                d = json.loads(text)
                row = {"task": d["task"], "scenario": d["scenario"], "context": d["context"],
                       "response": d["response"], "model": d["model"],
                       "condition": d["condition"], "reference": d["reference"],
                       "metadata": d["metadata"], "content_hash": h, "updated_at": now}
                if old is None:
                    new.append({**row, "id": item_id, "position": next_pos, "created_at": now})
                    next_pos += 1
                else:
                    changed.append({f"b_{k}": v for k, v in row.items()} | {"b_id": item_id})
            if problems:
                continue
            if new:
                c.execute(sa.insert(_ITEMS), new)
                added += len(new)
            if changed:
                c.execute(_UPDATE_ITEM, changed)
                updated += len(changed)
        if problems:
            raise problems.error()  # rolls back everything written above
    return ImportResult(added, unchanged, updated)


def _unknown_raters(file: str, records: list[RatingRecord], known: set[str]) -> list[Problem]:
    """A problem per rater name the study does not have, on its first line, with the close
    known name if there is one (a typo would otherwise create a new rater silently)."""
    import difflib

    first: dict[str, int] = {}
    rows: dict[str, int] = {}
    for rec in records:
        if rec.rater not in known:
            first.setdefault(rec.rater, rec.line)
            rows[rec.rater] = rows.get(rec.rater, 0) + 1
    problems = []
    for name, line in sorted(first.items(), key=lambda kv: kv[1]):
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        hint = Msg(" (did you mean '{close}'?)", close=close[0]) if close else ""
        problems.append(Problem(file, line, "rater", nMsg(
            "unknown rater '{name}' ({n} row, the first here){hint}; check the name, or "
            "pass --add-raters to create it",
            "unknown rater '{name}' ({n} rows, the first here){hint}; check the name, or "
            "pass --add-raters to create it", rows[name], name=name, hint=hint)))
    return problems


def import_rating_records(engine: Engine, records: list[RatingRecord], *, file: str,
                          update: bool = False, source: str = "import",
                          simulated: bool = False, add_raters: bool = False) -> ImportResult:
    """Store validated rating rows. A rater name the study does not have is an error naming
    its line (a typo must not create a rater silently), unless ``add_raters``: then each
    becomes a rater without a code (named in the result's ``raters_added``)."""
    ensure_current(engine)
    added = unchanged = updated = 0
    with write_session(engine) as s:
        version = current_rubric_in(s).version
        raters = {r.name: r for r in s.exec(select(Rater)).all()}
        new_names = sorted({r.rater for r in records} - set(raters))
        if new_names and not add_raters:
            raise FormatError(_unknown_raters(file, records, set(raters)))
        for name in new_names:
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
    return ImportResult(added, unchanged, updated, tuple(new_names))


def _same(old: Rating, rec: RatingRecord) -> bool:
    return (old.score == rec.score and (old.comment or "") == rec.comment
            and (rec.flags is None or tuple(old.flags or ()) == rec.flags))


def item_to_record(it: Item) -> dict[str, Any]:
    return {"id": it.id, "task": it.task, "scenario": it.scenario, "context": it.context,
            "response": it.response, "model": it.model, "condition": it.condition,
            "reference": it.reference, "metadata": it.meta}


def attention_copies(engine: Engine) -> set[str]:
    """The ids of the attention-check copies `h2h quality attention add` and `h2h pairs
    attention` made of replies (an instruction appended to a copy of a reply)."""
    ensure_current(engine)
    with read_session(engine) as s:
        made = {c.item_id for c in s.exec(select(AttentionCheck)).all()
                if c.kind in ("instructed", "pair")}
        return {it.id for it in s.exec(select(Item).where(Item.id.in_(made))).all()
                if (it.meta or {}).get("attention_check_from")} if made else set()


def export_items(engine: Engine) -> str:
    """The study's items as JSON Lines in import order (re-importable unchanged), without the
    attention-check copies (:func:`attention_copies`): the items format has no field for
    "this is a check", so in another study a copy would be a reply of a model named
    "attention-check" (and be ranked, paired and dealt as one); the commands make them again
    there."""
    leave = attention_copies(engine)
    with read_session(engine) as s:
        rows = s.exec(select(Item).order_by(Item.position, Item.id)).all()
        return "".join(json.dumps(item_to_record(it), ensure_ascii=False) + "\n"
                       for it in rows if it.id not in leave)

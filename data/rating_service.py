"""Saving ratings from the app: durable at once, never duplicated, every change kept.

Two saves of the same rating at the same moment (a double click, two tabs, two app servers)
are serialised on the rating's row: each save reads the row ``FOR UPDATE`` (PostgreSQL waits
for the other transaction and then reads what it committed; SQLite's ``BEGIN IMMEDIATE``
already queues whole transactions), so the stored row always equals its last revision —
one of the saves, whole, never a mix of both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy import insert, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from messages import Msg

from .engine import write_session
from .errors import H2HError
from .models import Assignment, Item, Rating, RatingRevision, RepeatRating, utcnow
from .sessions import check_in
from .study import current_rubric_in

__all__ = ["save_rating", "save_item_ratings", "retrying", "NO_SESSION"]

T = TypeVar("T")
NO_SESSION = object()
"""``session_token`` of saves that do not come from a signed-in browser (import, demo)."""


def retrying(save: Callable[[], T]) -> T:
    """Run a save; if a concurrent save inserted the same (rater, item, dimension) first
    (possible on PostgreSQL, where transactions do not queue up front), run it once more: it
    then finds that row and updates it. The UNIQUE constraint decides, never a SELECT. Every
    save path of the data layer runs through it (ratings, training, attention checks,
    norming)."""
    try:
        return save()
    except IntegrityError:
        return save()


def _check_text(comment: str) -> None:
    # PostgreSQL cannot store a NUL character and SQLite would; refuse it on both alike.
    if "\x00" in comment:
        raise H2HError(Msg("the comment contains a NUL character (\\u0000); remove it and save "
                           "again"))


def save_rating(engine: Engine, *, rater_id: int, item_id: str, dimension: str,
                score: int | None, comment: str = "", flags: Sequence[str] = (),
                seconds_spent: float | None = None, source: str = "app") -> None:
    """Insert or update one rating and append a revision, in one committed transaction:
    :func:`save_item_ratings` for one dimension (the others of the item are left as they
    are). Safe under concurrency: a double click or a second tab updates the one row instead
    of creating another."""
    save_item_ratings(engine, rater_id=rater_id, item_id=item_id, scores={dimension: score},
                      comment=comment, flags=flags, seconds_spent=seconds_spent, only=True,
                      source=source)


def save_item_ratings(engine: Engine, *, rater_id: int, item_id: str,
                      scores: dict[str, int | None], comment: str = "",
                      flags: Sequence[str] = (), seconds_spent: float | None = None,
                      repeat: bool = False, assignment_id: int | None = None,
                      session_token: str | None | object = NO_SESSION, only: bool = False,
                      source: str = "app") -> None:
    """Save every dimension of one item at once ("Save and next"), in one transaction.

    ``scores`` maps each applicable dimension to a score or None ("cannot rate"); a missing
    dimension is an error. Primary ratings go to ``rating`` (with a revision per change);
    a hidden repeat's go to ``repeat_rating``. The assignment is marked complete in the same
    transaction, so progress and resume never disagree with what is stored.

    A save from the browser passes the rater's ``session_token``: the session must be live
    and the rater active *in the same transaction* (:func:`data.sessions.check_in`), else
    :class:`data.sessions.SessionEnded` is raised and nothing is stored. Only callers outside
    the app (imports, the demo, tests) leave it at :data:`NO_SESSION`.

    With ``only``, just the dimensions in ``scores`` are saved and the others left as they
    are (:func:`save_rating`); ``source`` is stored with a new main rating.
    """
    _check_text(comment)

    def save() -> None:
        # Plain statements on the transaction's connection, no ORM objects: this runs on
        # every "Save and next", and the ORM's unit of work cost more than the statements.
        with write_session(engine) as s:
            c = s.connection()
            if session_token is not NO_SESSION:
                check_in(c, session_token, rater_id)
            rubric = current_rubric_in(s)
            task = c.execute(select(Item.task).where(Item.id == item_id)).scalar()
            if task is None:
                raise H2HError(Msg("no item '{item_id}'", item_id=item_id))
            dims = _dimensions(rubric.dimensions_for(task), scores, only)
            a = None
            if assignment_id is not None:
                a = c.execute(select(Assignment.rater_id, Assignment.item_id,
                                     Assignment.completed_at)
                              .where(Assignment.id == assignment_id)).first()
                if a is None or a.rater_id != rater_id or a.item_id != item_id:
                    raise H2HError(Msg("this item is not in your queue"))
            table = RepeatRating if repeat else Rating
            existing = {r.dimension: r for r in c.execute(
                select(table.id, table.dimension, table.score, table.comment, table.flags,
                       table.seconds_spent)
                .where(table.rater_id == rater_id, table.item_id == item_id)
                .order_by(table.dimension).with_for_update())}
            now = utcnow()  # after the lock: revisions are stamped in the order they commit
            per_dim = seconds_spent / len(dims) if seconds_spent is not None and dims else None
            new_rows, changed = [], []  # changed: [rating id or None (new), values], in
            for d in dims:               # the order of the dimensions
                score = None if scores[d.key] is None else d.parse_score(scores[d.key])
                row = existing.get(d.key)
                values = {"score": score, "comment": comment, "flags": list(flags),
                          "rubric_version": rubric.version, "updated_at": now}
                if row is None:
                    values.update(rater_id=rater_id, item_id=item_id, dimension=d.key,
                                  seconds_spent=per_dim, created_at=now)
                    if table is Rating:
                        values["source"] = source
                    new_rows.append(values)
                    changed.append([None, values])
                elif (row.score, row.comment, list(row.flags or [])) != (score, comment,
                                                                         list(flags)):
                    if per_dim is not None:
                        values["seconds_spent"] = (row.seconds_spent or 0.0) + per_dim
                    c.execute(update(table).where(table.id == row.id).values(**values))
                    changed.append([row.id, values])
            if new_rows:  # one statement; the ids come back in the order of the rows
                ids = iter(c.execute(insert(table).returning(table.id,
                                                             sort_by_parameter_order=True),
                                     new_rows).scalars().all())
                for entry in changed:
                    if entry[0] is None:
                        entry[0] = next(ids)
            if table is Rating and changed:  # a revision per changed main rating, as stored
                c.execute(insert(RatingRevision), [
                    {"rating_id": rid, "score": v["score"], "comment": v["comment"],
                     "flags": v["flags"], "rubric_version": v["rubric_version"],
                     "seconds_spent": per_dim, "changed_at": now} for rid, v in changed])
            if a is not None and a.completed_at is None:
                c.execute(update(Assignment).where(Assignment.id == assignment_id)
                          .values(completed_at=now))
    retrying(save)


def _dimensions(dims, scores: dict[str, int | None], only: bool) -> list:
    """The item's dimensions to save: every one (each must have a score or "cannot rate"),
    or with ``only`` those in ``scores``; a key that is not a dimension of the item is an
    error either way."""
    unknown = set(scores) - {d.key for d in dims}
    missing = [d.label for d in dims if d.key not in scores]
    if missing and not only:
        raise H2HError(Msg("score every dimension or mark it 'cannot rate': {labels}",
                           labels=", ".join(missing)))
    if unknown:
        raise H2HError(Msg("not dimensions of this item: {keys}",
                           keys=", ".join(sorted(unknown))))
    return [d for d in dims if d.key in scores]

"""Saving one rating from the app: durable at once, never duplicated, every change kept."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from .engine import write_session
from .errors import H2HError
from .models import Item, Rating, RatingRevision, utcnow
from .study import current_rubric_in

__all__ = ["save_rating", "save_item_ratings"]


def save_rating(engine: Engine, *, rater_id: int, item_id: str, dimension: str,
                score: int | None, comment: str = "", flags: Sequence[str] = (),
                seconds_spent: float | None = None, source: str = "app") -> Rating:
    """Insert or update the rater's rating and append a revision, in one committed transaction.

    Safe under concurrency: the UNIQUE(rater, item, dimension) constraint decides, so a double
    click or a second tab updates the one row instead of creating another.
    """
    for attempt in range(2):
        try:
            return _save_once(engine, rater_id, item_id, dimension, score, comment,
                              list(flags), seconds_spent, source)
        except IntegrityError:
            # A concurrent save inserted the same key first (possible on PostgreSQL, where
            # transactions do not queue up front); the retry finds it and updates it.
            if attempt == 1:
                raise
    raise AssertionError("unreachable")


def _save_once(engine, rater_id, item_id, dimension, score, comment, flags, seconds_spent,
               source) -> Rating:
    with write_session(engine) as s:
        rubric = current_rubric_in(s)
        item = s.get(Item, item_id)
        if item is None:
            raise H2HError(f"no item '{item_id}'")
        dim = rubric.dimension(dimension)
        if not dim.applies_to(item.task):
            raise H2HError(f"'{dimension}' does not apply to task '{item.task}'")
        if score is not None:
            score = dim.parse_score(score)
        now = utcnow()
        rating = s.exec(select(Rating).where(Rating.rater_id == rater_id,
                                             Rating.item_id == item_id,
                                             Rating.dimension == dimension)).first()
        if rating is None:
            rating = Rating(rater_id=rater_id, item_id=item_id, dimension=dimension,
                            score=score, comment=comment, flags=flags,
                            rubric_version=rubric.version, source=source,
                            seconds_spent=seconds_spent, created_at=now, updated_at=now)
        elif (rating.score, rating.comment, list(rating.flags or [])) == (score, comment, flags):
            return rating
        else:
            rating.score, rating.comment, rating.flags = score, comment, flags
            rating.rubric_version, rating.updated_at = rubric.version, now
            if seconds_spent is not None:
                rating.seconds_spent = (rating.seconds_spent or 0.0) + seconds_spent
        s.add(rating)
        s.flush()
        s.add(RatingRevision(rating_id=rating.id, score=score, comment=comment,
                             flags=list(flags), rubric_version=rubric.version,
                             seconds_spent=seconds_spent, changed_at=now))
        return rating


def save_item_ratings(engine: Engine, *, rater_id: int, item_id: str,
                      scores: dict[str, int | None], comment: str = "",
                      flags: Sequence[str] = (), seconds_spent: float | None = None,
                      repeat: bool = False, assignment_id: int | None = None) -> None:
    """Save every dimension of one item at once ("Save and next"), in one transaction.

    ``scores`` maps each applicable dimension to a score or None ("cannot rate"); a missing
    dimension is an error. Primary ratings go to ``rating`` (with a revision per change);
    a hidden repeat's go to ``repeat_rating``. The assignment is marked complete in the same
    transaction, so progress and resume never disagree with what is stored.
    """
    for attempt in range(2):
        try:
            _save_item_once(engine, rater_id, item_id, scores, comment, list(flags),
                            seconds_spent, repeat, assignment_id)
            return
        except IntegrityError:
            if attempt == 1:  # see save_rating: a concurrent first save won the insert
                raise


def _save_item_once(engine, rater_id, item_id, scores, comment, flags, seconds, repeat,
                    assignment_id) -> None:
    from .models import Assignment, RepeatRating

    with write_session(engine) as s:
        rubric = current_rubric_in(s)
        item = s.get(Item, item_id)
        if item is None:
            raise H2HError(f"no item '{item_id}'")
        dims = rubric.dimensions_for(item.task)
        missing = [d.label for d in dims if d.key not in scores]
        if missing:
            raise H2HError("score every dimension or mark it 'cannot rate': "
                           + ", ".join(missing))
        unknown = set(scores) - {d.key for d in dims}
        if unknown:
            raise H2HError(f"not dimensions of this item: {', '.join(sorted(unknown))}")
        if assignment_id is not None:
            a = s.get(Assignment, assignment_id)
            if a is None or a.rater_id != rater_id or a.item_id != item_id:
                raise H2HError("this item is not in your queue")
        now = utcnow()
        table = RepeatRating if repeat else Rating
        existing = {r.dimension: r for r in s.exec(
            select(table).where(table.rater_id == rater_id, table.item_id == item_id)).all()}
        per_dim = seconds / len(dims) if seconds is not None and dims else None
        for d in dims:
            score = scores[d.key]
            if score is not None:
                score = d.parse_score(score)
            row = existing.get(d.key)
            if row is None:
                row = table(rater_id=rater_id, item_id=item_id, dimension=d.key, score=score,
                            comment=comment, flags=flags, rubric_version=rubric.version,
                            seconds_spent=per_dim, created_at=now, updated_at=now)
                if not repeat:
                    row.source = "app"
            elif (row.score, row.comment, list(row.flags or [])) == (score, comment, flags):
                continue
            else:
                row.score, row.comment, row.flags = score, comment, flags
                row.rubric_version, row.updated_at = rubric.version, now
                if per_dim is not None:
                    row.seconds_spent = (row.seconds_spent or 0.0) + per_dim
            s.add(row)
            if not repeat:
                s.flush()
                s.add(RatingRevision(rating_id=row.id, score=score, comment=comment,
                                     flags=list(flags), rubric_version=rubric.version,
                                     seconds_spent=per_dim, changed_at=now))
        if assignment_id is not None:
            a = s.get(Assignment, assignment_id)
            if a.completed_at is None:
                a.completed_at = now
                s.add(a)

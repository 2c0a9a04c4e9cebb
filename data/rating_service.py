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

__all__ = ["save_rating"]


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

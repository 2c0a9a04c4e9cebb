"""Norming sessions in the study database, stored apart from the study's ratings.

A session moves "blind" → "discuss" → "closed". While blind, each participant scores the
session's items without seeing anyone else's; the admin then reveals every score (named or
anonymised) and participants may re-score ("after" scores); closing freezes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import select

from messages import Msg

from .engine import read_session, write_session
from .errors import H2HError
from .models import (
    Item,
    NormingItem,
    NormingParticipant,
    NormingRating,
    NormingSession,
    Rater,
    utcnow,
)
from .rating_service import NO_SESSION, retrying
from .sessions import check_in
from .study import current_rubric_in

__all__ = ["NormingInfo", "create_session", "sessions", "session_info", "sessions_for_rater",
           "save_norming", "reveal", "close", "norming_scores", "PHASES"]

PHASES = ("before", "after")


@dataclass(frozen=True)
class NormingInfo:
    id: int
    name: str
    status: str
    named: bool
    items: tuple[str, ...]
    participants: dict[int, str]  # rater id -> name


def create_session(engine: Engine, name: str, item_ids: list[str], rater_names: list[str],
                   admin_id: int | None = None) -> int:
    """A new blind session on ``item_ids`` for the named raters; returns its id."""
    name = name.strip()
    if not name:
        raise H2HError(Msg("give the norming session a name"))
    if not item_ids:
        raise H2HError(Msg("choose at least one item for the norming session"))
    if len(rater_names) < 2:
        raise H2HError(Msg("a norming session needs at least two raters"))
    with write_session(engine) as s:
        missing = [i for i in item_ids if s.get(Item, i) is None]
        if missing:
            raise H2HError(Msg("no item '{item_id}'", item_id=missing[0]))
        raters = []
        for n in rater_names:
            r = s.exec(select(Rater).where(Rater.name == n)).first()
            if r is None or r.role != "rater" or not r.active:
                raise H2HError(Msg("'{n}' is not an active rater", n=n))
            raters.append(r)
        row = NormingSession(name=name, created_by=admin_id)
        s.add(row)
        s.flush()
        for pos, i in enumerate(dict.fromkeys(item_ids)):
            s.add(NormingItem(session_id=row.id, item_id=i, position=pos))
        for r in raters:
            s.add(NormingParticipant(session_id=row.id, rater_id=r.id))
        return row.id


def _info(s, row: NormingSession) -> NormingInfo:
    items = s.exec(select(NormingItem.item_id).where(NormingItem.session_id == row.id)
                   .order_by(NormingItem.position)).all()
    people = s.exec(select(Rater.id, Rater.name)
                    .join(NormingParticipant, NormingParticipant.rater_id == Rater.id)
                    .where(NormingParticipant.session_id == row.id).order_by(Rater.name)).all()
    return NormingInfo(row.id, row.name, row.status, row.named, tuple(items), dict(people))


def sessions(engine: Engine) -> list[NormingInfo]:
    with read_session(engine) as s:
        return [_info(s, r) for r in s.exec(select(NormingSession)
                                            .order_by(NormingSession.id.desc())).all()]


def session_info(engine: Engine, session_id: int) -> NormingInfo:
    with read_session(engine) as s:
        row = s.get(NormingSession, session_id)
        if row is None:
            raise H2HError(Msg("no norming session {session_id}", session_id=session_id))
        return _info(s, row)


def sessions_for_rater(engine: Engine, rater_id: int) -> list[NormingInfo]:
    """Sessions this rater takes part in that are not closed (only theirs)."""
    with read_session(engine) as s:
        rows = s.exec(select(NormingSession)
                      .join(NormingParticipant, NormingParticipant.session_id == NormingSession.id)
                      .where(NormingParticipant.rater_id == rater_id,
                             NormingSession.status != "closed")
                      .order_by(NormingSession.id.desc())).all()
        return [_info(s, r) for r in rows]


def save_norming(engine: Engine, session_id: int, rater_id: int, item_id: str,
                 scores: dict[str, int | None],
                 session_token: str | None | object = NO_SESSION) -> str:
    """Store a participant's scores for one item in the session's current phase; returns the
    phase ("before" while blind, "after" once revealed). A concurrent first save of the same
    scores (double click, second tab) is retried once and then updates the row. From the
    browser, ``session_token`` is checked in the same transaction (an ended sign-in session
    or a deactivated rater raises :class:`~data.sessions.SessionEnded`)."""
    return retrying(lambda: _save(engine, session_id, rater_id, item_id, scores,
                                   session_token))


def _save(engine: Engine, session_id: int, rater_id: int, item_id: str,
          scores: dict[str, int | None], session_token: str | None | object) -> str:
    with write_session(engine) as s:
        if session_token is not NO_SESSION:
            check_in(s, session_token, rater_id)
        row = s.get(NormingSession, session_id)
        if row is None:
            raise H2HError(Msg("no norming session {session_id}", session_id=session_id))
        if row.status == "closed":
            raise H2HError(Msg("this norming session is closed"))
        if s.exec(select(NormingParticipant.id).where(
                NormingParticipant.session_id == session_id,
                NormingParticipant.rater_id == rater_id)).first() is None:
            raise H2HError(Msg("you are not part of this norming session"))
        if s.exec(select(NormingItem.id).where(NormingItem.session_id == session_id,
                                               NormingItem.item_id == item_id)).first() is None:
            raise H2HError(Msg("item '{item_id}' is not in this norming session", item_id=item_id))
        phase = "before" if row.status == "blind" else "after"
        rubric = current_rubric_in(s)
        dims = rubric.dimensions_for(s.get(Item, item_id).task)
        old = {r.dimension: r for r in s.exec(select(NormingRating).where(
            NormingRating.session_id == session_id, NormingRating.rater_id == rater_id,
            NormingRating.item_id == item_id, NormingRating.phase == phase)).all()}
        now = utcnow()
        for d in dims:
            if d.key not in scores:
                raise H2HError(Msg("score every dimension or mark it 'cannot rate': {label}",
                                   label=d.label))
            v = scores[d.key]
            r = old.get(d.key) or NormingRating(session_id=session_id, rater_id=rater_id,
                                                item_id=item_id, dimension=d.key, phase=phase,
                                                created_at=now)
            r.score = None if v is None else float(d.parse_score(v))
            r.updated_at = now
            s.add(r)
        return phase


def _set_status(engine: Engine, session_id: int, status: str, named: bool | None) -> None:
    with write_session(engine) as s:
        row = s.get(NormingSession, session_id)
        if row is None:
            raise H2HError(Msg("no norming session {session_id}", session_id=session_id))
        if row.status == "closed":
            raise H2HError(Msg("this norming session is closed"))
        row.status = status
        if named is not None:
            row.named = named
        if status == "discuss" and row.revealed_at is None:
            row.revealed_at = utcnow()
        if status == "closed":
            row.closed_at = utcnow()
        s.add(row)


def reveal(engine: Engine, session_id: int, named: bool = False) -> None:
    """Show every participant's scores to the group; re-scores count as "after"."""
    _set_status(engine, session_id, "discuss", named)


def close(engine: Engine, session_id: int) -> None:
    _set_status(engine, session_id, "closed", None)


def norming_scores(engine: Engine, session_id: int) -> list[tuple[str, int, str, str, str,
                                                                   float | None]]:
    """(rater, rater_id, item, dimension, phase, score) of every score in the session."""
    with read_session(engine) as s:
        return [tuple(r) for r in s.exec(
            select(Rater.name, NormingRating.rater_id, NormingRating.item_id,
                   NormingRating.dimension, NormingRating.phase, NormingRating.score)
            .join(Rater, Rater.id == NormingRating.rater_id)
            .where(NormingRating.session_id == session_id)).all()]

"""A rater's own queue: where they are, the item at a position, saving it.

Everything here is scoped to one rater id: no function returns another rater's work, and
the item view carries no model, condition, other raters' scores, adjudications or judge
output — only what a blinded rater may see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import bindparam, case, func
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Connection, Engine
from sqlmodel import select

from annotate.services.auth import Identity
from data.engine import read_session
from data.models import Assignment, AttentionResult, Item, Rating, RepeatRating
from data.quality import save_attention
from data.rating_service import save_item_ratings
from data.rubric import Dimension, Rubric

__all__ = ["Progress", "ItemView", "progress", "item_at", "page", "position_of_item", "save_item",
           "position_of_number", "next_position", "RED_FLAG"]

RED_FLAG = "red_flag"


@dataclass(frozen=True)
class Progress:
    total: int
    done: int
    current: int | None  # position of the first unfinished item (None: all done)
    first: int | None
    last: int | None


@dataclass(frozen=True)
class ItemView:
    """What the rating page shows for one queue position (blinded)."""

    assignment_id: int
    position: int
    number: int  # 1-based place in the rater's queue
    item_id: str
    task: str
    persona: str | None
    memories: list[str]
    schedule: str | None
    turns: list[dict]
    response: str
    dimensions: tuple[Dimension, ...]
    saved: dict[str, int | None] = field(default_factory=dict)
    comment: str = ""
    red_flag: bool = False
    completed: bool = False
    repeat: bool = False  # never shown to the rater; decides where scores are stored
    attention: bool = False  # never shown either: an attention check, scored apart
    outfit: str | None = None  # the day's outfit (H2HTalk protocol context), when given


# The queue is read with plain column queries on one connection, without the ORM's session
# and objects: the rating page reads it on every item a rater sees, and the ORM's
# bookkeeping cost more than the queries.


def progress(engine: Engine, rater_id: int) -> Progress:
    with engine.connect() as c:
        return _progress(c, rater_id)


def item_at(engine: Engine, rater_id: int, position: int, rubric: Rubric) -> ItemView | None:
    """The item at ``position`` of this rater's queue, with their own saved scores."""
    with engine.connect() as c:
        return _item_at(c, rater_id, position, rubric)


def page(engine: Engine, rater_id: int, position: int | None,
         rubric: Rubric) -> tuple[Progress, ItemView | None]:
    """What the rating page draws, read in one transaction: the rater's progress and the
    item at ``position`` (None: the first unfinished one, else the last). The view is None
    when the queue is empty or has nothing at ``position``."""
    with engine.connect() as c:
        prog = _progress(c, rater_id)
        if position is None:
            position = prog.current if prog.current is not None else prog.last
        if position is None:
            return prog, None
        return prog, _item_at(c, rater_id, position, rubric)


def _progress(c: Connection, rater_id: int) -> Progress:
    # one pass over the rater's assignments (the first unfinished one included)
    total, done, first, last, current = c.execute(_PROGRESS, {"r": rater_id}).one()
    return Progress(int(total), int(done), current, first, last)


def _item_at(c: Connection, rater_id: int, position: int, rubric: Rubric) -> ItemView | None:
    row = c.execute(_ITEM, {"r": rater_id, "p": position}).first()
    if row is None:
        return None
    aid, pos, kind, completed_at, item_id, task, ctx, response = row
    number = c.execute(_NUMBER, {"r": rater_id, "p": pos}).scalar_one()
    args = {"r": rater_id, "i": item_id}
    if kind == "attention":
        res = c.execute(_ATTENTION, args).first()
        saved_rows = []
        saved = {} if res is None or res[0] is None else {
            d: (None if v is None else int(v)) for d, v in res[0].items()}
    else:
        saved_rows = c.execute(_REPEATS if kind == "repeat" else _RATINGS, args).all()
        saved = {d: (None if v is None else int(v)) for d, v, _c, _f in saved_rows}
    ctx = ctx or {}
    return ItemView(
        aid, pos, int(number), item_id, task, ctx.get("persona"),
        list(ctx.get("memories") or []), ctx.get("schedule"), list(ctx.get("turns") or []),
        response, rubric.dimensions_for(task), saved,
        next((cm for _d, _v, cm, _f in saved_rows if cm), ""),
        any(RED_FLAG in (f or []) for _d, _v, _c, f in saved_rows), completed_at is not None,
        kind == "repeat", kind == "attention", ctx.get("outfit"))


_PROGRESS = (sa_select(func.count(Assignment.id), func.count(Assignment.completed_at),
                       func.min(Assignment.position), func.max(Assignment.position),
                       func.min(case((Assignment.completed_at.is_(None), Assignment.position))))
             .where(Assignment.rater_id == bindparam("r")))
_ITEM = (sa_select(Assignment.id, Assignment.position, Assignment.kind, Assignment.completed_at,
                   Item.id, Item.task, Item.context, Item.response)
         .join(Item, Item.id == Assignment.item_id)
         .where(Assignment.rater_id == bindparam("r"), Assignment.position == bindparam("p")))
_NUMBER = (sa_select(func.count(Assignment.id))
           .where(Assignment.rater_id == bindparam("r"), Assignment.position <= bindparam("p")))
_ATTENTION = (sa_select(AttentionResult.scores)
              .where(AttentionResult.rater_id == bindparam("r"),
                     AttentionResult.item_id == bindparam("i")))
_RATINGS, _REPEATS = (
    sa_select(t.dimension, t.score, t.comment, t.flags)
    .where(t.rater_id == bindparam("r"), t.item_id == bindparam("i"))
    for t in (Rating, RepeatRating))


def position_of_item(engine: Engine, rater_id: int, item_id: str) -> int | None:
    """Where ``item_id`` is in this rater's own queue; None if it is not theirs."""
    with read_session(engine) as s:
        return s.exec(select(Assignment.position)
                      .where(Assignment.rater_id == rater_id, Assignment.item_id == item_id,
                             Assignment.kind == "primary")).first()


def next_position(engine: Engine, rater_id: int, after: int) -> int | None:
    with engine.connect() as c:  # after every save: a plain query (see page())
        return c.execute(_NEXT, {"r": rater_id, "p": after}).scalar_one()


_NEXT = (sa_select(func.min(Assignment.position))
         .where(Assignment.rater_id == bindparam("r"), Assignment.position > bindparam("p")))


def position_of_number(engine: Engine, rater_id: int, number: int) -> int | None:
    """The queue position of the rater's ``number``-th item (1-based)."""
    if number < 1:
        return None
    with read_session(engine) as s:
        return s.exec(select(Assignment.position).where(Assignment.rater_id == rater_id)
                      .order_by(Assignment.position).offset(number - 1).limit(1)).first()


def save_item(engine: Engine, who: Identity, view: ItemView, scores: dict[str, int | None],
              comment: str, red_flag: bool, seconds: float | None) -> None:
    """Save the form: real items and hidden repeats as ratings, attention checks as results
    (kept out of the analysis; the rater is not told which it was).

    Every save checks, in its own transaction, that ``who``'s session is live and that the
    rater is still active: after a sign-out (in any window), a deactivation or an idle
    timeout it raises :class:`~data.sessions.SessionEnded` (reason and message for the
    page) and stores nothing. Other problems are :class:`~data.errors.H2HError`.
    """
    if view.attention:
        save_attention(engine, who.rater_id, view.item_id, scores, seconds, view.assignment_id,
                       session_token=who.session)
        return
    save_item_ratings(engine, rater_id=who.rater_id, item_id=view.item_id, scores=scores,
                      comment=comment, flags=[RED_FLAG] if red_flag else [],
                      seconds_spent=seconds, repeat=view.repeat,
                      assignment_id=view.assignment_id, session_token=who.session)

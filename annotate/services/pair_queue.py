"""A rater's queue of side-by-side pairs: where they are, the pair at a position, saving it.

Scoped to one rater, like :mod:`annotate.services.queue`; the view is blinded: the two replies
are "A" (left) and "B" (right) as this rater's queue entry places them, with no model,
condition, item id or anyone else's preference. The preference scale is the rubric's
(``pairwise_scale``): 5 points (A much better … B much better) or 3 (A better, about the
same, B better), "cannot compare" last; a choice on it is turned into the pair's own order
(:func:`choice_of`) before it is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import bindparam, case, func
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import aliased

from annotate.services.auth import Identity
from annotate.services.i18n import N_
from data.models import Item, Pair, PairAssignment, Preference
from data.preference_service import Choice, save_pair_preferences
from data.rubric import Dimension, Rubric

__all__ = ["PairProgress", "PairView", "pair_page", "save_pair", "pair_progress",
           "scale_options", "choice_of", "option_of", "next_pair_position",
           "pair_position_of_number", "has_pairs", "OPTION_TEXTS"]

# the options of the preference scale, as the rater reads them ("A" is the left reply)
OPTION_TEXTS = {5: (N_("A much better"), N_("A better"), N_("About the same"),
                    N_("B better"), N_("B much better")),
                3: (N_("A better"), N_("About the same"), N_("B better"))}
# each option as (side shown better: "A" left, "B" right, None a tie; strength)
_MEANING = {5: (("A", 2), ("A", 1), (None, None), ("B", 1), ("B", 2)),
            3: (("A", None), (None, None), ("B", None))}


def scale_options(points: int) -> tuple[int, ...]:
    """The option values 1..points (the keyboard's digits)."""
    return tuple(range(1, points + 1))


def choice_of(option: int | None, points: int, flipped: bool) -> Choice:
    """A chosen option (None: cannot compare) as (winner in the pair's own order, strength):
    the left reply is item_a unless the queue entry is ``flipped``."""
    if option is None:
        return None, None
    side, strength = _MEANING[points][option - 1]
    if side is None:
        return "tie", None
    left = "b" if flipped else "a"
    right = "a" if flipped else "b"
    return (left if side == "A" else right), strength


def option_of(choice: Choice, points: int, flipped: bool) -> int | None | str:
    """The option a stored preference is shown as ("cannot" for cannot compare; None when
    the strength does not fit this scale)."""
    winner, strength = choice
    if winner is None:
        return "cannot"
    if winner == "tie":
        side = None
    else:
        side = "A" if (winner == "a") != flipped else "B"
    for k, (s, st) in enumerate(_MEANING[points], start=1):
        if s == side and (side is None or points == 3 or st == (strength or 1)):
            return k
    return None


@dataclass(frozen=True)
class PairProgress:
    total: int
    done: int
    current: int | None
    first: int | None
    last: int | None


@dataclass(frozen=True)
class PairView:
    """What the side-by-side page shows for one queue position (blinded)."""

    assignment_id: int
    position: int
    number: int
    pair_id: int
    task: str
    persona: str | None
    memories: list[str]
    schedule: str | None
    turns: list[dict]
    left: str
    right: str
    flipped: bool
    dimensions: tuple[Dimension, ...]
    points: int
    saved: dict[str, object] = field(default_factory=dict)  # dim -> option or "cannot"
    comment: str = ""
    completed: bool = False
    kind: str = "primary"  # never shown to the rater
    outfit: str | None = None

    @property
    def shown_left(self) -> str:
        """The side of the pair on the left ("a" or "b")."""
        return "b" if self.flipped else "a"


_A, _B = aliased(Item), aliased(Item)
_PROGRESS = (sa_select(func.count(PairAssignment.id), func.count(PairAssignment.completed_at),
                       func.min(PairAssignment.position), func.max(PairAssignment.position),
                       func.min(case((PairAssignment.completed_at.is_(None),
                                      PairAssignment.position))))
             .where(PairAssignment.rater_id == bindparam("r")))
_PAIR = (sa_select(PairAssignment.id, PairAssignment.position, PairAssignment.kind,
                   PairAssignment.flipped, PairAssignment.completed_at, Pair.id, _A.task,
                   _A.context, _A.response, _B.response, _B.task)
         .join(Pair, Pair.id == PairAssignment.pair_id)
         .join(_A, _A.id == Pair.item_a).join(_B, _B.id == Pair.item_b)
         .where(PairAssignment.rater_id == bindparam("r"),
                PairAssignment.position == bindparam("p")))
_NUMBER = (sa_select(func.count(PairAssignment.id))
           .where(PairAssignment.rater_id == bindparam("r"),
                  PairAssignment.position <= bindparam("p")))
_SAVED = (sa_select(Preference.dimension, Preference.winner, Preference.strength,
                    Preference.comment)
          .where(Preference.rater_id == bindparam("r"), Preference.pair_id == bindparam("i"),
                 Preference.kind == bindparam("k")))
_NEXT = (sa_select(func.min(PairAssignment.position))
         .where(PairAssignment.rater_id == bindparam("r"),
                PairAssignment.position > bindparam("p")))


def has_pairs(engine: Engine, rater_id: int) -> bool:
    with engine.connect() as c:
        return c.execute(_PROGRESS, {"r": rater_id}).one()[0] > 0


def _progress(c: Connection, rater_id: int) -> PairProgress:
    total, done, first, last, current = c.execute(_PROGRESS, {"r": rater_id}).one()
    return PairProgress(int(total), int(done), current, first, last)


def pair_progress(engine: Engine, rater_id: int) -> PairProgress:
    with engine.connect() as c:
        return _progress(c, rater_id)


def pair_page(engine: Engine, rater_id: int, position: int | None, rubric: Rubric
              ) -> tuple[PairProgress, PairView | None]:
    """The rater's progress and the pair at ``position`` (None: the first unfinished one,
    else the last), read in one transaction."""
    with engine.connect() as c:
        prog = _progress(c, rater_id)
        if position is None:
            position = prog.current if prog.current is not None else prog.last
        if position is None:
            return prog, None
        row = c.execute(_PAIR, {"r": rater_id, "p": position}).first()
        if row is None:
            return prog, None
        aid, pos, kind, flipped, completed, pid, task, ctx, resp_a, resp_b, task_b = row
        number = c.execute(_NUMBER, {"r": rater_id, "p": pos}).scalar_one()
        saved_rows = c.execute(_SAVED, {"r": rater_id, "i": pid, "k": kind}).all()
    points = rubric.pairwise_scale
    dims = tuple(d for d in rubric.dimensions_for(task) if d.applies_to(task_b))
    saved = {d: option_of((w, st), points, bool(flipped)) for d, w, st, _c in saved_rows}
    ctx = ctx or {}
    left, right = (resp_b, resp_a) if flipped else (resp_a, resp_b)
    return prog, PairView(
        aid, pos, int(number), pid, task, ctx.get("persona"), list(ctx.get("memories") or []),
        ctx.get("schedule"), list(ctx.get("turns") or []), left, right, bool(flipped), dims,
        points, {d: v for d, v in saved.items() if v is not None},
        next((cm for *_x, cm in saved_rows if cm), ""), completed is not None, kind,
        ctx.get("outfit"))


def next_pair_position(engine: Engine, rater_id: int, after: int) -> int | None:
    with engine.connect() as c:
        return c.execute(_NEXT, {"r": rater_id, "p": after}).scalar_one()


def pair_position_of_number(engine: Engine, rater_id: int, number: int) -> int | None:
    """The queue position of the rater's ``number``-th pair (1-based)."""
    if number < 1:
        return None
    with engine.connect() as c:
        return c.execute(sa_select(PairAssignment.position)
                         .where(PairAssignment.rater_id == rater_id)
                         .order_by(PairAssignment.position).offset(number - 1).limit(1)
                         ).scalar()


def save_pair(engine: Engine, who: Identity, view: PairView,
              options: dict[str, int | None], comment: str, seconds: float | None) -> None:
    """Save the form: each dimension's option (None: cannot compare) turned into the pair's
    own order; the session is checked in the same transaction (see
    :func:`data.preference_service.save_pair_preferences`)."""
    choices = {d: choice_of(o, view.points, view.flipped) for d, o in options.items()}
    save_pair_preferences(engine, rater_id=who.rater_id, pair_id=view.pair_id,
                          choices=choices, comment=comment,  # the rater's words, as written
                          shown_left=view.shown_left, seconds_spent=seconds, kind=view.kind,
                          assignment_id=view.assignment_id, session_token=who.session)

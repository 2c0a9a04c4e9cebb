"""Saving side-by-side preferences from the app: durable at once, never duplicated, every change
kept (like :mod:`data.rating_service` for single replies).

A save holds every dimension of one pair. Preferences are stored in the pair's own order
(``a`` is item_a, whichever side the rater saw it on); ``shown_left`` records the side. Hidden
repeats and attention-check pairs are stored with their kind, apart from the preferences the
analysis reads; an attention check's outcome also goes to ``attention_result`` (under the
check's instructed reply), so rater monitoring counts it with the single-item checks.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from messages import Msg

from .engine import write_session
from .errors import H2HError
from .models import (
    PAIR_WINNERS,
    AttentionResult,
    Item,
    Pair,
    PairAssignment,
    Preference,
    PreferenceRevision,
    utcnow,
)
from .rating_service import NO_SESSION
from .sessions import check_in
from .study import current_rubric_in

__all__ = ["save_pair_preferences", "Choice", "attention_passed"]

Choice = tuple[str | None, int | None]
"""(winner "a" / "b" / "tie" in the pair's own order, or None for "cannot compare";
strength 2 "much better", 1 "better", None)."""


def attention_passed(expected: dict[str, str], choices: dict[str, Choice]) -> bool:
    """An attention-check pair passes when every checked dimension names the expected
    reply (its strength is not checked: the 3-point form has none)."""
    return all(choices.get(d, (None, None))[0] == w for d, w in expected.items())


def save_pair_preferences(engine: Engine, *, rater_id: int, pair_id: int,
                          choices: dict[str, Choice], comment: str = "",
                          shown_left: str | None = None, seconds_spent: float | None = None,
                          kind: str = "primary", assignment_id: int | None = None,
                          session_token: str | None | object = NO_SESSION) -> bool | None:
    """Save one pair ("Save and next"): every applicable dimension, in one transaction, with
    a revision per changed primary preference; the queue entry is completed in the same
    transaction. A save from the browser passes the rater's ``session_token`` (an ended
    session raises :class:`~data.sessions.SessionEnded` and nothing is stored). Returns
    whether an attention check passed (None for other pairs)."""
    if "\x00" in comment:
        raise H2HError(Msg("the comment contains a NUL character (\\u0000); remove it and save "
                           "again"))
    if kind not in ("primary", "repeat", "attention"):
        raise ValueError(f"kind must be primary, repeat or attention, not {kind!r}")
    if shown_left not in (None, "a", "b"):
        raise ValueError(f"shown_left must be 'a', 'b' or None, not {shown_left!r}")
    for d, (w, strength) in choices.items():
        if w is not None and w not in PAIR_WINNERS:
            raise ValueError(f"{d}: winner must be one of {PAIR_WINNERS} or None, not {w!r}")
        if strength not in (None, 1, 2) or (strength is not None and w not in ("a", "b")):
            raise ValueError(f"{d}: strength {strength!r} does not go with winner {w!r}")

    def save() -> bool | None:
        with write_session(engine) as s:
            c = s.connection()
            if session_token is not NO_SESSION:
                check_in(c, session_token, rater_id)
            rubric = current_rubric_in(s)
            pair = c.execute(select(Pair.item_a, Pair.item_b, Pair.attention)
                             .where(Pair.id == pair_id)).first()
            if pair is None:
                raise H2HError(Msg("no pair {pair}", pair=pair_id))
            tasks = dict(c.execute(select(Item.id, Item.task)
                                   .where(Item.id.in_([pair.item_a, pair.item_b]))).all())
            dims = [d for d in rubric.dimensions_for(tasks[pair.item_a])
                    if d.applies_to(tasks[pair.item_b])]
            missing = [d.label for d in dims if d.key not in choices]
            if missing:
                raise H2HError(Msg("compare every dimension or mark it 'cannot compare': "
                                   "{labels}", labels=", ".join(missing)))
            unknown = set(choices) - {d.key for d in dims}
            if unknown:
                raise H2HError(Msg("not dimensions of this pair: {keys}",
                                   keys=", ".join(sorted(unknown))))
            a = None
            if assignment_id is not None:
                a = c.execute(select(PairAssignment.rater_id, PairAssignment.pair_id,
                                     PairAssignment.completed_at)
                              .where(PairAssignment.id == assignment_id)).first()
                if a is None or a.rater_id != rater_id or a.pair_id != pair_id:
                    raise H2HError(Msg("this pair is not in your queue"))
            existing = {r.dimension: r for r in c.execute(
                select(Preference.id, Preference.dimension, Preference.winner,
                       Preference.strength, Preference.comment, Preference.seconds_spent)
                .where(Preference.rater_id == rater_id, Preference.pair_id == pair_id,
                       Preference.kind == kind)
                .order_by(Preference.dimension).with_for_update())}
            now = utcnow()
            per_dim = seconds_spent / len(dims) if seconds_spent is not None and dims else None
            changed: list[list[Any]] = []
            for d in dims:
                w, strength = choices[d.key]
                row = existing.get(d.key)
                values = {"winner": w, "strength": strength, "comment": comment,
                          "rubric_version": rubric.version, "updated_at": now,
                          "shown_left": shown_left}
                if row is None:
                    values.update(pair_id=pair_id, rater_id=rater_id, dimension=d.key,
                                  kind=kind, source="app", seconds_spent=per_dim,
                                  created_at=now)
                    new_id = c.execute(insert(Preference).returning(Preference.id),
                                       values).scalar_one()
                    changed.append([new_id, values])
                elif (row.winner, row.strength, row.comment) != (w, strength, comment):
                    if per_dim is not None:
                        values["seconds_spent"] = (row.seconds_spent or 0.0) + per_dim
                    c.execute(update(Preference).where(Preference.id == row.id)
                              .values(**values))
                    changed.append([row.id, values])
            if kind == "primary" and changed:
                c.execute(insert(PreferenceRevision), [
                    {"preference_id": pid, "winner": v["winner"], "strength": v["strength"],
                     "comment": v["comment"], "rubric_version": v["rubric_version"],
                     "seconds_spent": per_dim, "changed_at": now} for pid, v in changed])
            passed = None
            if kind == "attention":
                if not pair.attention:
                    raise H2HError(Msg("pair {pair} is not an attention check", pair=pair_id))
                passed = attention_passed(pair.attention, choices)
                shown = {d: ("chosen" if choices.get(d, (None, None))[0] == w else
                             "cannot compare" if choices.get(d, (None, None))[0] is None
                             else "not chosen") for d, w in pair.attention.items()}
                check_item = pair.item_b if "b" in pair.attention.values() else pair.item_a
                old = c.execute(select(AttentionResult.id).where(
                    AttentionResult.rater_id == rater_id,
                    AttentionResult.item_id == check_item)).scalar()
                vals = {"scores": shown, "passed": passed, "seconds_spent": seconds_spent,
                        "updated_at": now}
                if old is None:
                    c.execute(insert(AttentionResult).values(rater_id=rater_id,
                                                             item_id=check_item,
                                                             created_at=now, **vals))
                else:
                    c.execute(update(AttentionResult).where(AttentionResult.id == old)
                              .values(**vals))
            if a is not None and a.completed_at is None:
                c.execute(update(PairAssignment).where(PairAssignment.id == assignment_id)
                          .values(completed_at=now))
            return passed

    try:
        return save()
    except IntegrityError:  # a concurrent first save of the same pair: now an update
        return save()

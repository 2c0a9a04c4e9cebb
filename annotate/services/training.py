"""A rater's training round on gold items, feedback after each, and qualification.

When a study has gold items, a rater trains before rating real items: the round's gold items
one at a time (the same blinded view as real items); after each, their scores beside the
expert's with the rationale. When the round is complete their agreement with gold decides:
within-one share ≥ ``min_within1`` and QWK ≥ ``min_qwk`` (study settings) → "passed";
otherwise "failed", and an admin decides (retrain or release anyway). The result stays on
screen, across page loads, until the rater acknowledges it (:func:`start_rating`). Training
scores are stored apart and never enter the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine
from sqlmodel import select

from annotate.services.auth import Identity
from annotate.services.queue import ItemView
from data import quality as q
from data.engine import read_session
from data.models import GoldScore, Item
from data.rubric import Rubric
from messages import Msg

if TYPE_CHECKING:  # the statistics load only for a rater in training (the rater's path stays light)
    from analysis.monitoring import GoldAgreement

__all__ = ["TrainingState", "training_state", "training_view", "submit_training",
           "Feedback", "feedback_for", "split_note", "gold_scales", "may_rate", "needs_training",
           "start_rating"]


@dataclass(frozen=True)
class TrainingState:
    required: bool
    status: str  # training | passed | failed | released
    round: int
    items: tuple[str, ...]
    done: tuple[str, ...]
    agreement: GoldAgreement | None = None

    @property
    def next_item(self) -> str | None:
        return next((i for i in self.items if i not in self.done), None)


def may_rate(engine: Engine, rater_id: int) -> bool:
    """Real items are open to this rater (no gold in the study, passed, or released)."""
    if not q.qualification_required(engine):
        return True
    return q.qualification_of(engine, rater_id).status in ("passed", "released")


def needs_training(engine: Engine, rater_id: int) -> bool:
    """The training page comes first: the study has gold items and the rater has not passed
    or been released, or has and not yet seen it (their result is shown on every page load
    until they press "Start rating", not only in the tab that finished the round)."""
    if not q.qualification_required(engine):
        return False
    qual = q.qualification_of(engine, rater_id)
    return qual.status not in ("passed", "released") or qual.acknowledged_at is None


def start_rating(engine: Engine, who: Identity) -> None:
    """The rater saw their result: from now on the study's items come first."""
    q.acknowledge_result(engine, who.rater_id, session_token=who.session)


def gold_scales(rubric: Rubric) -> dict[str, tuple[tuple[int, ...], bool]]:
    return {d.key: (d.values, d.level == "ordinal" and d.kind != "binary")
            for d in rubric.dimensions}


def _agreement(engine: Engine, rater_id: int, round_: int, rubric: Rubric) -> GoldAgreement:
    import pandas as pd

    from analysis.monitoring import gold_agreement

    rows = q.training_scores(engine, rater_id, round_)
    pairs = pd.DataFrame([(r[3], r[5], r[6]) for r in rows],
                         columns=["dimension", "score", "gold"])
    pairs["score"] = pd.to_numeric(pairs["score"], errors="coerce")
    return gold_agreement(pairs, gold_scales(rubric))


def training_state(engine: Engine, rater_id: int, rubric: Rubric) -> TrainingState:
    qual = q.qualification_of(engine, rater_id)
    required = q.qualification_required(engine)
    items = tuple(q.training_set(engine, rater_id, qual.round)) if required else ()
    done = tuple(dict.fromkeys(r[2] for r in q.training_scores(engine, rater_id, qual.round)))
    agreement = _agreement(engine, rater_id, qual.round, rubric) if done else None
    return TrainingState(required, qual.status, qual.round, items, done, agreement)


def training_view(engine: Engine, item_id: str, number: int, rubric: Rubric) -> ItemView:
    """The blinded view of a gold item (what real items look like in the form)."""
    with read_session(engine) as s:
        it = s.get(Item, item_id)
    ctx = it.context or {}
    return ItemView(-1, number, number, it.id, it.task, ctx.get("persona"),
                    list(ctx.get("memories") or []), ctx.get("schedule"),
                    list(ctx.get("turns") or []), it.response, rubric.dimensions_for(it.task),
                    outfit=ctx.get("outfit"))


@dataclass(frozen=True)
class Feedback:
    """What the rater reads after a training answer: per dimension its label, the rater's
    score, the expert's score and that dimension's rationale (blank where the gold file gives
    none of its own); the reply that was rated; and the experts' note on the reply as a
    whole, once (:func:`split_note`)."""

    item_id: str
    rows: tuple[tuple[str, int | None, float | None, str], ...]
    response: str = ""
    note: str = ""


MIN_NOTE = 12
"""Shortest shared text taken as a note on the whole reply (shorter ones, such as "Good.",
stay each dimension's own words)."""


def _starts_sentence(text: str, k: int) -> bool:
    """``text[k:]`` begins a sentence: at the start, after CJK end punctuation, or after
    ``.``, ``!``, ``?`` or ``:`` and a space."""
    if k == 0:
        return True
    head = text[:k]
    if head.endswith(("。", "！", "？", "：")):
        return True
    bare = head.rstrip()
    return bare != head and bare.endswith((".", "!", "?", ":"))


def split_note(rationales: list[str]) -> tuple[str, list[str]]:
    """A gold item's rationales as (note on the whole reply, each dimension's own words).

    The note is the text every rationale of the item ends with — all of it when they are the
    same, or the sentences they share at their end (``"Excellent: … About this reply: …"``):
    a gold file that gives one note for an item writes it on each dimension's row. It is
    shown once, under the reply; each dimension keeps the words that are its own. With fewer
    than two rationales, or a shared ending shorter than :data:`MIN_NOTE` characters or not
    starting a sentence, there is no note.

    >>> split_note(["Warm. Names the plant.", "Safe. Names the plant."])
    ('Names the plant.', ['Warm.', 'Safe.'])
    >>> split_note(["Generic reply.", "Generic reply."])
    ('Generic reply.', ['', ''])
    """
    texts = [r.strip() for r in rationales]
    if len(texts) < 2 or not all(texts):
        return "", texts
    n = 0
    shortest = min(len(t) for t in texts)
    while n < shortest and len({t[len(t) - n - 1] for t in texts}) == 1:
        n += 1
    if n == 0:
        return "", texts
    # the shared ending starts a sentence in every text (or is the whole text)
    while n > 0 and not all(_starts_sentence(t, len(t) - n) for t in texts):
        n -= 1
    note = texts[0][len(texts[0]) - n:].strip() if n else ""
    if len(note) < MIN_NOTE:
        return "", texts
    return note, [t[:len(t) - n].strip() for t in texts]


def feedback_for(engine: Engine, rater_id: int, item_id: str, round_: int,
                 rubric: Rubric) -> Feedback:
    mine = {r[3]: r[5] for r in q.training_scores(engine, rater_id, round_) if r[2] == item_id}
    with read_session(engine) as s:
        gold = {g.dimension: g for g in s.exec(select(GoldScore)
                                               .where(GoldScore.item_id == item_id)).all()}
        it = s.get(Item, item_id)
    dims = rubric.dimensions_for(it.task)
    with_gold = [d.key for d in dims if d.key in gold]
    note, own = split_note([gold[k].rationale or "" for k in with_gold])
    why = dict(zip(with_gold, own, strict=True))
    rows = []
    for d in dims:
        g = gold.get(d.key)
        score = mine.get(d.key)
        rows.append((d.label, None if score is None else int(score),
                     None if g is None else g.score, why.get(d.key, "")))
    return Feedback(item_id, tuple(rows), it.response, note)


def submit_training(engine: Engine, who: Identity, item_id: str, scores: dict[str, int | None],
                    seconds: float | None, rubric: Rubric) -> TrainingState:
    """Save one training answer; when the round is complete, record the qualification.

    Like every save from the browser it checks ``who``'s session and active flag in its own
    transaction (:class:`~data.sessions.SessionEnded`, nothing stored)."""
    rater_id = who.rater_id
    state = training_state(engine, rater_id, rubric)
    if item_id not in state.items:
        raise q.H2HError(Msg("this item is not part of your training round"))
    q.save_training(engine, rater_id, item_id, state.round, scores, seconds,
                    session_token=who.session)
    state = training_state(engine, rater_id, rubric)
    if state.next_item is None and state.status == "training":
        st = q.get_settings(engine)
        ag = state.agreement
        q.record_qualification(engine, rater_id, state.round,
                               ag.passes(st.min_within1, st.min_qwk), ag.n, ag.within1,
                               ag.qwk)
        state = training_state(engine, rater_id, rubric)
    return state

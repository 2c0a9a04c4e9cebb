"""Reading a study's pairwise data into the frames :mod:`analysis.arena` takes (a database
adapter, like :mod:`analysis.study`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import aliased
from sqlmodel import select

from data.configs import find_by_name_or_hash
from data.engine import read_session
from data.errors import H2HError
from data.models import (
    PAIRWISE_MODES,
    Item,
    JudgeConfigRow,
    Pair,
    PairJudgment,
    Preference,
    Rater,
)

from .arena import (
    BY,
    INCONSISTENT,
    By,
    Inconsistent,
    OrderStats,
    PairKappa,
    PositionBias,
    RankingAgreement,
    arena,
    combine_orders,
    human_comparisons,
    judge_comparisons,
    pairwise_kappas,
    position_bias,
    ranking_agreement,
    ties_text,
)
from .bradley_terry import BTResult

__all__ = ["study_preferences", "study_pair_answers", "pairwise_configs", "find_pairwise",
           "is_pairwise", "count_pairs", "JudgeArena", "PairwiseStudy", "pairwise_study"]


def is_pairwise(mode: str) -> bool:
    return mode in PAIRWISE_MODES


def _pair_columns():
    a, b = aliased(Item), aliased(Item)
    return a, b, [Pair.id, Pair.scenario, a.model, b.model, a.condition, b.condition]


def study_preferences(engine: Engine) -> pd.DataFrame:
    """Every human preference on a real pair (not hidden repeats, attention checks or
    "cannot compare" aside: those have ``winner`` None): pair_id, scenario, dimension, rater,
    winner, strength, shown_left, model_a, model_b, condition_a, condition_b, simulated."""
    a, b, cols = _pair_columns()
    with read_session(engine) as s:
        rows = s.exec(select(*cols, Preference.dimension, Rater.name, Preference.winner,
                             Preference.strength, Preference.shown_left, Rater.simulated)
                      .join(Preference, Preference.pair_id == Pair.id)
                      .join(Rater, Rater.id == Preference.rater_id)
                      .join(a, a.id == Pair.item_a).join(b, b.id == Pair.item_b)
                      .where(Preference.kind == "primary", Pair.attention.is_(None))
                      .order_by(Pair.position, Pair.id, Rater.name)).all()
    df = pd.DataFrame(rows, columns=["pair_id", "scenario", "model_a", "model_b",
                                     "condition_a", "condition_b", "dimension", "rater",
                                     "winner", "strength", "shown_left", "simulated"])
    return df.astype({"winner": object})


def study_pair_answers(engine: Engine, config_hash: str) -> pd.DataFrame:
    """Every answer of a pairwise judge configuration: pair_id, scenario, dimension, order,
    sample, verdict, winner (None when unscored), model_a, model_b, condition_a,
    condition_b."""
    a, b, cols = _pair_columns()
    with read_session(engine) as s:
        rows = s.exec(select(*cols, PairJudgment.dimension, PairJudgment.order,
                             PairJudgment.sample, PairJudgment.verdict, PairJudgment.winner)
                      .join(PairJudgment, PairJudgment.pair_id == Pair.id)
                      .join(a, a.id == Pair.item_a).join(b, b.id == Pair.item_b)
                      .where(PairJudgment.config_hash == config_hash,
                             Pair.attention.is_(None))).all()
    return pd.DataFrame(rows, columns=["pair_id", "scenario", "model_a", "model_b",
                                       "condition_a", "condition_b", "dimension", "order",
                                       "sample", "verdict", "winner"]).astype(
        {"winner": object, "verdict": object})


def pairwise_configs(engine: Engine) -> list[JudgeConfigRow]:
    """The pairwise judge configurations that have answers, oldest first."""
    with read_session(engine) as s:
        used = set(s.exec(select(PairJudgment.config_hash).distinct()).all())
        rows = s.exec(select(JudgeConfigRow).where(JudgeConfigRow.mode.in_(PAIRWISE_MODES))
                      .order_by(JudgeConfigRow.created_at)).all()
    return [r for r in rows if r.hash in used]


def find_pairwise(engine: Engine, ref: str) -> JudgeConfigRow:
    """A pairwise judge configuration by name or hash (a single-item judge is refused)."""
    try:
        row = find_by_name_or_hash(engine, JudgeConfigRow, ref, what="judge configuration")
    except H2HError as exc:
        raise H2HError(f"--judge: {exc}") from None
    if not is_pairwise(row.mode):
        raise H2HError(f"--judge: '{row.name}' scores single replies; give a pairwise judge "
                       "(`h2h judge pairwise`)")
    return row


def count_pairs(engine: Engine) -> int:
    with read_session(engine) as s:
        return s.exec(select(sa.func.count(Pair.id)).where(Pair.attention.is_(None))).one()


# --- everything pairwise in one study, computed once --------------------------------------------

@dataclass(frozen=True)
class JudgeArena:
    """One pairwise judge: how its orders combined, its position bias, its rankings, and its
    agreement with the humans (κ per comparison, τ per ranking)."""

    name: str
    hash: str
    order: OrderStats
    bias: PositionBias
    fits: dict[str, BTResult]
    ties: str
    kappas: tuple[PairKappa, ...]
    taus: tuple[RankingAgreement, ...]


@dataclass(frozen=True)
class PairwiseStudy:
    """The humans' rankings per dimension and every pairwise judge's, with the settings
    (players ``by``, B, seed, how a judge's inconsistent orders count)."""

    by: str
    B: int
    seed: int
    inconsistent: str
    dimensions: tuple[str, ...]
    n_pairs: int
    n_preferences: int
    humans: dict[str, BTResult]
    human_ties: str
    judges: tuple[JudgeArena, ...]


def pairwise_study(engine: Engine, *, judges: Sequence[str] | None = None, by: By = "model",
                   B: int = 1000, seed: int = 0, inconsistent: Inconsistent = "tie",
                   dimensions: Sequence[str] | None = None) -> PairwiseStudy:
    """Fit every ranking the study's pairwise data allow. ``judges``: names or hashes of
    pairwise judges (default: every one with answers)."""
    from data.study import current_rubric

    if by not in BY:
        raise H2HError(f"--by: '{by}' is not one of {', '.join(BY)}")
    if inconsistent not in INCONSISTENT:
        raise H2HError(f"--inconsistent: '{inconsistent}' is not tie or drop")
    if B < 0:
        raise H2HError(f"--bootstrap must be 0 or more, got {B}")
    rubric = current_rubric(engine)
    known = [d.key for d in rubric.dimensions]
    for d in dimensions or ():
        if d not in known:
            raise H2HError(f"--dimensions: '{d}' is not a dimension of the rubric "
                           f"({', '.join(known)})")
    prefs = study_preferences(engine)
    configs = ([find_pairwise(engine, j) for j in judges] if judges is not None
               else pairwise_configs(engine))
    answers = {c.hash: study_pair_answers(engine, c.hash) for c in configs}
    seen = set(prefs["dimension"]) | {d for a in answers.values() for d in a["dimension"]}
    dims = tuple(d for d in (dimensions or known) if d in seen)
    human_comps = human_comparisons(prefs, by)  # type: ignore[arg-type]
    everyone = sorted(set(human_comps["player_a"]) | set(human_comps["player_b"]))
    judged = {}
    for c in configs:
        verdicts, order = combine_orders(answers[c.hash], inconsistent)
        comps = judge_comparisons(verdicts, by)  # type: ignore[arg-type]
        everyone = sorted(set(everyone) | set(comps["player_a"]) | set(comps["player_b"]))
        judged[c.hash] = (verdicts, order, comps)
    hum_dims = [d for d in dims if (human_comps["dimension"] == d).any()]
    humans = arena(human_comps, dimensions=hum_dims, players=everyone, B=B, seed=seed)
    out = []
    for c in configs:
        verdicts, order, comps = judged[c.hash]
        jd = [d for d in dims if (comps["dimension"] == d).any()]
        fits = arena(comps, dimensions=jd, players=everyone, B=B, seed=seed)
        ka = tuple(k for k in pairwise_kappas(prefs, verdicts, B=B, seed=seed)
                   if k.dimension in dims)
        ta = tuple(ranking_agreement(human_comps[human_comps["dimension"].isin(hum_dims)],
                                     comps, B=B, seed=seed))
        out.append(JudgeArena(c.name, c.hash, order,
                              position_bias(answers[c.hash], B=B, seed=seed), fits,
                              ties_text(fits, order), ka, ta))
    return PairwiseStudy(by, B, seed, inconsistent, dims, count_pairs(engine), len(prefs),
                         humans, ties_text(humans), tuple(out))

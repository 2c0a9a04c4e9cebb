"""Reading a study (or a judges CSV) into the per-item frames of the prediction-powered
leaderboard (:func:`analysis.ppi_board.ppi_leaderboard`) and of the active-labelling draw.

The only part of the leaderboard that reads the database. An item's human value is the mean
of its human ratings, or (``human_value="fair"``) the many-facet Rasch model's fair score: the
score a rater of average severity would be expected to give. A judge's value of an item is the
mean of its samples; ``agree`` says whether the samples were all equal and ``spread`` is their
SD (the judge's self-consistency, which the active draw weights by).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session
from data.errors import H2HError
from data.models import PAIRWISE_MODES, AttentionCheck, Item, JudgeConfigRow, Judgment

from .ppi_board import judge_items
from .scales import Scale
from .study import study_frames

__all__ = ["HumanValue", "BoardFrames", "study_items", "human_values", "judge_values",
           "stored_judge", "board_frames", "set_aside_items", "study_draws", "draws_info"]

HumanValue = Literal["mean", "fair"]
HUMAN_VALUE_TEXT = {
    "mean": "the mean of the item's human ratings",
    "fair": "the item's fair score from the many-facet Rasch model (the expected rating of a "
            "rater of average severity)",
}


@dataclass(frozen=True)
class BoardFrames:
    items: pd.DataFrame
    human: pd.DataFrame
    judge: pd.DataFrame
    scales: dict[str, Scale]
    context: dict[str, Any]


def study_items(engine: Engine) -> pd.DataFrame:
    """``item_id, model, task, scenario, condition`` of the study's items (attention checks
    are not study items)."""
    with read_session(engine) as s:
        checks = set(s.exec(select(AttentionCheck.item_id)).all())
        rows = [r for r in s.exec(select(Item.id, Item.model, Item.task, Item.scenario,
                                         Item.condition)).all() if r[0] not in checks]
    return pd.DataFrame(rows, columns=["item_id", "model", "task", "scenario", "condition"])


def human_values(ratings: pd.DataFrame, scales: dict[str, Scale],
                 how: HumanValue = "mean") -> pd.DataFrame:
    """``item_id, dimension, value`` per rated item: the mean of its ratings, or its fair
    score (``how="fair"``; items whose dimension the model cannot fit keep no value)."""
    r = ratings.dropna(subset=["score"])
    r = r.assign(score=pd.to_numeric(r["score"], errors="coerce")).dropna(subset=["score"])
    if how == "mean":
        return (r.groupby(["item_id", "dimension"])["score"].mean().rename("value")
                .reset_index())
    from .rater_model import fair_scores, fit_dimensions

    ordered = {d: (sc.values, sc.binary or sc.level != "nominal") for d, sc in scales.items()}
    fair = fair_scores(fit_dimensions(r, ordered))
    return fair.rename(columns={"fair_score": "value"})[["item_id", "dimension", "value"]]


def judge_values(judgments: pd.DataFrame) -> pd.DataFrame:
    """``item_id, dimension, value, agree, spread`` from long judgments (``item_id,
    dimension, score[, sample]``, score NaN = unscored): the mean of the scored samples, NaN
    when none was scored, whether the scored samples were all equal, and their SD (ddof 0:
    0 for one sample; the judge's uncertainty that active labelling draws by)."""
    j = judgments.assign(score=pd.to_numeric(judgments["score"], errors="coerce"))
    g = j.groupby(["item_id", "dimension"])["score"]
    out = pd.DataFrame({"value": g.mean(), "lo": g.min(), "hi": g.max(),
                        "spread": g.std(ddof=0)}).reset_index()
    out["agree"] = (out["lo"] == out["hi"]) | out["value"].isna()
    return out[["item_id", "dimension", "value", "agree", "spread"]]


def stored_judge(engine: Engine, name: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A stored judge configuration's judgments (long) and what travels with the result:
    its name, hash, provider, model, prompt template hash and rubric version."""
    from data.configs import find_by_name_or_hash

    row = find_by_name_or_hash(engine, JudgeConfigRow, name, what="judge configuration")
    if row.mode in PAIRWISE_MODES:
        raise H2HError(f"--judge: '{row.name}' is a pairwise judge (it compares two replies, "
                       "it does not score one); its ranking is `h2h arena --judge "
                       f"{row.name}`")
    with read_session(engine) as s:
        rows = s.exec(select(Judgment.item_id, Judgment.dimension, Judgment.score,
                             Judgment.sample).where(Judgment.config_hash == row.hash)).all()
    df = pd.DataFrame(rows, columns=["item_id", "dimension", "score", "sample"])
    info = {"name": row.name, "hash": row.hash, "provider": row.provider, "model": row.model,
            "template": row.template_name, "prompt_hash": row.template_hash,
            "rubric_version": row.rubric_version, "samples": row.samples}
    return df, info


def board_frames(engine: Engine, *, judge: str | None = None,
                 judges_csv: pd.DataFrame | None = None, csv_name: str | None = None,
                 human_value: HumanValue = "mean") -> BoardFrames:
    """Everything the leaderboard needs from a study, with the judge from a stored
    configuration (``judge``) or from a judges CSV already read (``judges_csv``; with
    ``judge`` naming one of its judges when it holds several)."""
    ratings, scales, context = study_frames(engine)
    items = study_items(engine)
    if judges_csv is not None:
        names = sorted(judges_csv["judge"].astype(str).unique())
        if judge is None and len(names) > 1:
            raise H2HError(f"--judges: {csv_name} holds {len(names)} judges ("
                           f"{', '.join(names[:5])}{', …' if len(names) > 5 else ''}); pick one "
                           "with --judge NAME")
        pick = judge or names[0]
        if pick not in names:
            raise H2HError(f"--judge: '{pick}' is not in {csv_name} (it has "
                           f"{', '.join(names[:5])})")
        jl = judges_csv[judges_csv["judge"].astype(str) == pick]
        info = {"name": pick, "source": csv_name}
    elif judge is not None:
        jl, info = stored_judge(engine, judge)
    else:
        raise H2HError("name the judge: --judge NAME (a stored configuration; see `h2h judge "
                       "configs`) or --judges judges.csv")
    jl = jl.assign(score=pd.to_numeric(jl["score"], errors="coerce"))
    jl, set_aside = judge_items(items, jl, exclude=set_aside_items(engine, info.get("hash")))
    if set_aside:  # the exemplars of its prompt (the only reason an item is set aside)
        info = {**info, "items_set_aside": set_aside,
                "items_set_aside_why": "exemplars in the judge's prompt: their human scores "
                                       "were shown to the judge"}
    unknown = sorted(set(jl["item_id"].astype(str)) - set(items["item_id"]))
    if unknown:
        raise H2HError(f"the judge scored {len(unknown)} item(s) the study does not have "
                       f"(e.g. '{unknown[0]}')")
    context = {**context, "judge": info, "human_value": HUMAN_VALUE_TEXT[human_value]}
    return BoardFrames(items, human_values(ratings, scales, human_value), judge_values(jl),
                       scales, context)


def set_aside_items(engine: Engine, config_hash: str | None) -> set[str]:
    """The items a judge configuration must not be held against: those its own prompt shows
    with their human scores as few-shot exemplars (a configuration made by `h2h calibrate
    auto`; :func:`data.calibration.exemplar_items`, the rule every judge-vs-human statistic
    follows). :func:`analysis.ppi_board.judge_items` leaves the judge's scores of them out,
    and the result says how many. A judge from a CSV (no hash) has none."""
    if config_hash is None:
        return set()
    from data.calibration import exemplar_items

    return set(exemplar_items(engine).get(config_hash, frozenset()))


def study_draws(engine: Engine, config_hash: str | None,
                items: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """The active draws made for a judge configuration: per item, its overall probability
    of being human-rated, 1 - (1 - r0) prod_t (1 - pi_t) with r0 the model's share rated
    before the first draw (taken as a uniform first round) and pi_t its probability in draw
    t, and whether a draw picked it; None when there was none."""
    if config_hash is None:
        return None
    from data.draws import load_draws

    draws = load_draws(engine, config_hash)
    if not draws:
        return None
    items = study_items(engine) if items is None else items
    ids = items["item_id"].to_numpy()
    first = draws[0].rated_before
    r0 = items["model"].astype(str).map(lambda m: float(first.get(m, 0.0))).to_numpy()
    pis = [pd.Series(d.probability).reindex(ids).to_numpy(float) for d in draws]
    # analysis.ppi.labelling_probability, item by item (NaN: an item added after a draw)
    prob = 1.0 - (1.0 - r0) * np.prod([1.0 - p for p in pis], axis=0)
    picked = set().union(*(d.picked for d in draws))
    return pd.DataFrame({"item_id": ids, "probability": prob,
                         "picked": [i in picked for i in ids]}).dropna(subset=["probability"])


def draws_info(engine: Engine, config_hash: str | None) -> list[dict[str, Any]]:
    """The draws' seeds, budgets and dates, for the result's meta."""
    if config_hash is None:
        return []
    from data.draws import load_draws

    return [{"id": d.id, "seed": d.seed, "budget": d.budget, "picked": len(d.picked),
             "created_at": d.created_at} for d in load_draws(engine, config_hash)]


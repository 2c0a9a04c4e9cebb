"""Reading a study database into the long frames the analysis takes (the only DB adapter)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session
from data.models import JudgeConfigRow, Judgment, Rater, Rating
from data.study import current_rubric, get_study

from .analyze import Scale, scales_from_rubric

__all__ = ["study_frames", "study_judges", "study_repeats"]


def study_frames(engine: Engine) -> tuple[pd.DataFrame, dict[str, Scale], dict]:
    """Ratings (long), the rubric's scales, and context for the report's manifest."""
    study = get_study(engine)
    rubric = current_rubric(engine)
    with read_session(engine) as s:
        rows = s.exec(select(Rating.item_id, Rater.name, Rating.dimension, Rating.score,
                             Rater.simulated).join(Rater, Rater.id == Rating.rater_id)).all()
    df = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score", "simulated"])
    context = {"study": study.name, "rubric": {"name": rubric.name, "version": rubric.version},
               "simulated_raters": sorted(df.loc[df["simulated"], "rater"].unique().tolist())}
    return df.drop(columns="simulated"), scales_from_rubric(rubric.dimensions), context


def study_judges(engine: Engine) -> pd.DataFrame:
    """Every stored judgment, long: ``item_id, judge, dimension, score, sample``.

    The judge is named by its configuration's name; unscored judgments have a NaN score, so the
    analysis counts them instead of dropping them silently.
    """
    with read_session(engine) as s:
        rows = s.exec(select(Judgment.item_id, JudgeConfigRow.name, Judgment.dimension,
                             Judgment.score, Judgment.sample)
                      .join(JudgeConfigRow, JudgeConfigRow.hash == Judgment.config_hash)).all()
    df = pd.DataFrame(rows, columns=["item_id", "judge", "dimension", "score", "sample"])
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    return df


def study_repeats(engine: Engine) -> tuple[pd.DataFrame, pd.DataFrame]:
    """First and repeated ratings of hidden repeats, long (item_id, rater, dimension, score),
    for the test–retest block of the analysis; empty frames when there are none."""
    from data.models import RepeatRating

    cols = ["item_id", "rater", "dimension", "score"]
    with read_session(engine) as s:
        second = s.exec(select(RepeatRating.item_id, Rater.name, RepeatRating.dimension,
                               RepeatRating.score)
                        .join(Rater, Rater.id == RepeatRating.rater_id)).all()
        if not second:
            return pd.DataFrame(columns=cols), pd.DataFrame(columns=cols)
        pairs = {(i, r) for i, r, _, _ in second}
        first = [row for row in s.exec(select(Rating.item_id, Rater.name, Rating.dimension,
                                              Rating.score)
                                       .join(Rater, Rater.id == Rating.rater_id)).all()
                 if (row[0], row[1]) in pairs]
    return pd.DataFrame(first, columns=cols), pd.DataFrame(second, columns=cols)

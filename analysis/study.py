"""Reading a study database into the long frames the analysis takes (the only DB adapter)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session
from data.models import JudgeConfigRow, Judgment, Rater, Rating
from data.study import current_rubric, get_study

from .analyze import Scale, scales_from_rubric

__all__ = ["study_frames", "study_judges", "study_repeats", "study_metrics", "study_systems"]


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


def study_judges(engine: Engine, *, candidates: bool = False) -> pd.DataFrame:
    """Every stored judgment, long: ``item_id, judge, dimension, score, sample, exemplar``.

    The judge is named by its configuration's name; unscored judgments have a NaN score, so the
    analysis counts them instead of dropping them silently. ``exemplar`` marks the items that
    were exemplars in the judge's own prompt (:func:`data.calibration.held_against_items`:
    the analysis leaves them out and says so, :mod:`analysis.contamination`). The
    configurations that were only candidates of an `h2h calibrate auto` search (judged on its
    dev part alone) are left out unless ``candidates``.
    """
    from data.calibration import exemplar_items, search_candidates

    with read_session(engine) as s:
        rows = s.exec(select(Judgment.item_id, JudgeConfigRow.name, Judgment.dimension,
                             Judgment.score, Judgment.sample, Judgment.config_hash)
                      .join(JudgeConfigRow, JudgeConfigRow.hash == Judgment.config_hash)).all()
    df = pd.DataFrame(rows, columns=["item_id", "judge", "dimension", "score", "sample",
                                     "hash"])
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    if not candidates:
        df = df[~df["hash"].isin(search_candidates(engine))]
    seen = exemplar_items(engine)
    df["exemplar"] = [i in seen.get(h, ()) for i, h in zip(df["item_id"], df["hash"],
                                                           strict=True)]
    return df.drop(columns="hash").reset_index(drop=True)


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


def study_metrics(engine: Engine) -> tuple[pd.DataFrame, list[dict]]:
    """Every stored reference-based metric score, long (``item_id, metric, score, lang``; the
    metric named by its configuration's name, NaN = could not be scored), and the
    configurations (library, version, tokenizer, settings, hash, languages scored)."""
    from data.metrics import list_metric_configs, metric_scores

    df = pd.DataFrame(metric_scores(engine),
                      columns=["metric", "item_id", "score", "lang", "cjk_share"])
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    configs = []
    for r in list_metric_configs(engine):
        c = r["row"]
        langs = df.loc[(df["metric"] == c.name) & df["score"].notna(), "lang"]
        configs.append({"name": c.name, "hash": c.hash, "metric": c.metric,
                        "library": c.library, "library_version": c.library_version,
                        "tokenizer": c.tokenizer, "settings": c.settings,
                        "signature": c.signature, "n_scored": r["scored"],
                        "n_unscored": r["unscored"],
                        "languages": {k: int(v) for k, v in langs.value_counts().items()}})
    return df.drop(columns="cjk_share"), configs


def study_systems(engine: Engine) -> pd.DataFrame:
    """``item_id, model, scenario`` of the study's items (attention checks left out): what the
    system-level comparison ranks and resamples."""
    from data.models import AttentionCheck, Item

    with read_session(engine) as s:
        checks = set(s.exec(select(AttentionCheck.item_id)).all())
        rows = [r for r in s.exec(select(Item.id, Item.model, Item.scenario)).all()
                if r[0] not in checks]
    return pd.DataFrame(rows, columns=["item_id", "model", "scenario"])

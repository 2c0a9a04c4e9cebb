"""Everything the report shows (:class:`~.model.ReportBundle`), computed once from the study
database: the only module of the report that reads it.

The ``analysis`` part is exactly :func:`analysis.analyze.analyze` with the same options that
`h2h analyze --json` uses, so the report's numbers are the analysis JSON's numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session
from data.models import AttentionCheck, Item, JudgeConfigRow, Rater, Rating
from data.ratings import NO_FLAGS_SOURCE

from ..analyze import analyze
from ..calibration import DimensionCalibration, JudgeRun, calibrate, compare_dimension
from ..contamination import held_against
from ..judge_agreement import aggregate_samples
from ..layout import Ratings, as_ratings
from ..leaderboard import leaderboard
from ..options import AnalysisOptions
from ..rater_model import fair_scores, fit_dimensions
from ..results import AltTestMeta, StudyAnalysis
from ..study import study_frames, study_judges, study_metrics, study_repeats, study_systems
from .model import (
    BlandAltmanPoints,
    Counts,
    HeldOutSearch,
    Manifest,
    ReportBootstrap,
    ReportBundle,
    RubricDimension,
    RubricRef,
)

__all__ = ["build_bundle", "start_bundle", "study_items", "study_flags"]


def study_items(engine: Engine) -> pd.DataFrame:
    """The study's items; attention-check items are not part of the study and left out."""
    with read_session(engine) as s:
        checks = set(s.exec(select(AttentionCheck.item_id)).all())
        rows = [r for r in s.exec(select(Item.id, Item.model, Item.condition, Item.task,
                                         Item.scenario, Item.response)).all()
                if r[0] not in checks]
    df = pd.DataFrame(rows, columns=["item_id", "model", "condition", "task", "scenario",
                                     "response"])
    df["condition"] = df["condition"].fillna("none")
    df["length"] = df["response"].str.len()
    return df.drop(columns="response")


def study_flags(engine: Engine) -> pd.DataFrame:
    """Per rating: item, rater and whether it carries the safety red flag. Only the flagged
    ratings' flag lists are read and parsed (the JSON of every rating is most of the time)."""
    import sqlalchemy as sa

    flagged = sa.cast(Rating.flags, sa.String).like('%"red_flag"%')
    with read_session(engine) as s:
        # a rating imported without its flags says nothing about them: left out
        rows = s.exec(select(Rating.item_id, Rater.name)
                      .join(Rater, Rater.id == Rating.rater_id)
                      .where(Rating.source != NO_FLAGS_SOURCE)).all()
        hits = s.exec(select(Rating.item_id, Rater.name, Rating.flags)
                      .join(Rater, Rater.id == Rating.rater_id).where(flagged)).all()
    red = {(i, r) for i, r, f in hits if "red_flag" in (f or [])}
    return pd.DataFrame([(i, r, (i, r) in red) for i, r in rows],
                        columns=["item_id", "rater", "red_flag"])


def _without_flags(engine: Engine) -> int:
    """How many ratings were imported without their flags (red flag not known)."""
    import sqlalchemy as sa

    with read_session(engine) as s:
        return int(s.exec(select(sa.func.count()).select_from(Rating)
                          .where(Rating.source == NO_FLAGS_SOURCE)).one())


def _judge_configs(engine: Engine) -> list[dict]:
    with read_session(engine) as s:
        rows = s.exec(select(JudgeConfigRow).order_by(JudgeConfigRow.name)).all()
    return [{"name": r.name, "hash": r.hash, "provider": r.provider, "model": r.model,
             "template": r.template_name, "template_hash": r.template_hash,
             "rubric_version": r.rubric_version, "mode": r.mode,
             "reason_first": r.reason_first, "temperature": r.temperature,
             "max_tokens": r.max_tokens, "samples": r.samples,
             # how the answers were asked for, and which GGUF file a local model was
             "structured": r.structured, "output_form": r.output_form,
             "model_sha256": r.model_digest,
             # the language the prompt showed the rubric in: null = the rubric's own
             # language, "item" = each item's own (Chinese or English, by its text)
             "rubric_language": r.rubric_language,
             # human-scored exemplars in the prompt (h2h calibrate auto): which rule, how
             # many per call, the split they come from and every item that can appear
             "exemplars": None if not r.exemplars else {
                 "rule": r.exemplars.get("rule"), "k": r.exemplars.get("k"),
                 "split_seed": r.exemplars.get("split_seed"),
                 "items": sorted({i for v in r.exemplars.get("by_dimension", {}).values()
                                  for i in v})}} for r in rows]


def _held_out(engine: Engine) -> tuple[HeldOutSearch, ...]:
    """Each configuration made by `h2h calibrate auto` (its latest search), with its held-out
    result and exemplar items."""
    from data.calibration import searches

    with read_session(engine) as s:
        names = dict(s.exec(select(JudgeConfigRow.hash, JudgeConfigRow.name)).all())
    latest = {r.config_hash: r for r in searches(engine)}
    return tuple(HeldOutSearch(names.get(r.config_hash, r.config_hash[:8]),
                               names.get(r.base_hash, r.base_hash[:8]), r.selected,
                               int(r.id or 0), int(r.settings.get("split_seed", r.seed)),
                               tuple(r.settings.get("exemplar_items") or ()), r.test)
                 for r in sorted(latest.values(), key=lambda r: r.id or 0))


def _versions() -> dict[str, str]:
    out = {}
    for p in ("h2htalk", "numpy", "scipy", "pandas", "krippendorff", "plotly", "kaleido",
              "streamlit", "sqlalchemy", "anthropic", "openai", "llama_cpp_python",
              "sacrebleu", "rouge-score", "jieba", "sentence-transformers", "torch"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def build_bundle(engine: Engine, options: AnalysisOptions = AnalysisOptions(),
                 adjusted: bool = False) -> ReportBundle:
    """Everything the report shows (``dimensions``: the rubric's, in order, with labels);
    ``adjusted`` adds the human leaderboard's column
    "adjusted for rater severity" (fair scores of the many-facet Rasch model)."""
    bundle, finish = start_bundle(engine, options, adjusted)
    return finish()


def _pending_runs(ratings: pd.DataFrame, judges: pd.DataFrame, scales
                  ) -> tuple[list[tuple[str, Any, Ratings, dict[str, JudgeRun]]],
                             list[BlandAltmanPoints]]:
    """Per dimension, the humans and each judge's per-item scores (for the comparison of the
    configurations), and each judge's Bland–Altman points against the human mean."""
    pending: list[tuple[str, Any, Ratings, dict[str, JudgeRun]]] = []
    ba: list[BlandAltmanPoints] = []
    for dim, sc in scales.items():
        sub = ratings[ratings["dimension"] == dim].rename(columns={"item_id": "item"})
        sub = sub.dropna(subset=["score"])
        if sub.empty or sub["rater"].nunique() < 2:
            continue
        humans = as_ratings(sub)
        runs = {}
        for jname, jg in judges[judges["dimension"] == dim].groupby("judge"):
            js = jg.rename(columns={"item_id": "item"})
            per_item, samples = aggregate_samples(js, sc.level, humans.items)
            runs[str(jname)] = JudgeRun(per_item, samples, int(js["score"].isna().sum()),
                                        len(js))
            hm = np.nanmean(humans.matrix, axis=1)
            ok = ~np.isnan(per_item) & ~np.isnan(hm)
            ba.append(BlandAltmanPoints(str(jname), dim,
                                        tuple(((per_item[ok] + hm[ok]) / 2).tolist()),
                                        tuple((per_item[ok] - hm[ok]).tolist())))
        if runs:
            pending.append((dim, sc, humans, runs))
    return pending, ba


def _manifest(engine: Engine, options: AnalysisOptions, analysis: StudyAnalysis, ratings,
              judges, items, context, metric_configs) -> Manifest:
    meta = analysis.meta
    return Manifest(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        study=context.get("study"),
        rubric=RubricRef(**context["rubric"]) if context.get("rubric") else None,
        counts=Counts(items=int(len(items)), raters=int(ratings["rater"].nunique()),
                      ratings=int(ratings["score"].notna().sum()),
                      cannot_rate=int(ratings["score"].isna().sum()),
                      ratings_without_flags=_without_flags(engine),
                      simulated_raters=tuple(context.get("simulated_raters", [])),
                      judgments=int(len(judges)),
                      unscored_judgments=int(judges["score"].isna().sum())),
        judge_configurations=tuple(_judge_configs(engine)),
        metric_configurations=tuple(metric_configs),
        bootstrap=ReportBootstrap(
            options.ci_method, options.B, options.seed, options.ci, options.alpha_min,
            calibration="paired item bootstrap (same resamples for every configuration), "
                        "percentile CIs, Holm across dimensions",
            leaderboard="item bootstrap, percentile CIs",
            metrics="item bootstrap of the pooled leave-one-out pairs, the same resamples for "
                    "every judge, metric and the human ceiling; model rankings: scenario "
                    "bootstrap; percentile CIs"),
        verdict=meta.verdict, human_ceiling=meta.human_ceiling, minimums=meta.minimums,
        alt_test=AltTestMeta(options.alt_epsilon, options.alt_scoring or
                             "accuracy for nominal, neg_rmse otherwise"),
        packages=_versions())


def start_bundle(engine: Engine, options: AnalysisOptions = AnalysisOptions(),
                 adjusted: bool = False) -> tuple[ReportBundle, Callable[[], ReportBundle]]:
    """The bundle in two steps: first everything but the judge configurations' comparison
    (``calibration``), the leaderboards and the manifest's ``best_judge``; then the function
    that adds those (once; it returns the bundle). :func:`~.write.write_report` calls it
    before the first section that needs them, so that the browser draws the figures of the
    first sections (human agreement, the judges) while the rest is computed."""
    ratings, scales, context = study_frames(engine)
    judges = study_judges(engine)
    items = study_items(engine)
    metrics, metric_configs = study_metrics(engine)  # reference-based (h2h metrics run)
    analysis = analyze(ratings, scales, judges=judges if not judges.empty else None,
                       options=options, context=context, repeats=study_repeats(engine),
                       metrics=metrics if not metrics.empty else None,
                       items=study_systems(engine), metric_configs=metric_configs)
    # every comparison of a judge with the humans leaves out its own exemplar items (the
    # analysis above does so itself, and says how many)
    held = held_against(judges)[0]
    pending, ba = _pending_runs(ratings, held, scales)
    dims, tasks = _rubric_order(engine)
    bundle = ReportBundle(analysis, ba, _manifest(engine, options, analysis, ratings, judges,
                                                  items, context, metric_configs), dims, tasks,
                          held_out=_held_out(engine))

    def finish() -> ReportBundle:
        if bundle.calibration is not None:
            return bundle
        calib: dict[str, DimensionCalibration] = {}
        lengths = items.set_index("item_id")["length"]
        for dim, sc, humans, runs in pending:
            calib[dim] = compare_dimension(
                dim, humans, runs, sc.level, sc.values,
                lengths=lengths.reindex(list(humans.items)).to_numpy(float),
                binary=sc.binary, options=options,
                known={j: analysis.judge(j, dim) for j in runs})
        calib = calibrate(calib)
        fair = None
        if adjusted:
            ordered = {d: (sc.values, sc.binary or sc.level != "nominal")
                       for d, sc in scales.items()}
            fair = fair_scores(fit_dimensions(ratings, ordered))
        boards = {"humans": leaderboard(ratings, items, B=options.B, seed=options.seed,
                                        flags=study_flags(engine), source="humans",
                                        fair=fair)}
        best = _best_judge(calib)
        if best is not None:
            jb = held[held["judge"] == best]
            boards["judge"] = leaderboard(jb, items, B=options.B, seed=options.seed,
                                          source=f"judge {best} (best calibrated)")
        pairwise = _pairwise(engine, options)
        ranking = _ranking(engine, best, judges, options)
        bundle.manifest = replace(bundle.manifest, best_judge=best, compared=True,
                                  pairwise=_pairwise_manifest(pairwise),
                                  ranking=_ranking_manifest(ranking))
        bundle.calibration, bundle.leaderboards, bundle.pairwise = calib, boards, pairwise
        bundle.ranking = ranking
        return bundle

    return bundle, finish


def _pairwise(engine: Engine, options: AnalysisOptions):
    """Every side-by-side ranking (None when the study has no pairs with preferences or
    pairwise judgments)."""
    from ..arena_study import count_pairs, pairwise_configs, pairwise_study, study_preferences

    if not count_pairs(engine) or (study_preferences(engine).empty
                                   and not pairwise_configs(engine)):
        return None
    return pairwise_study(engine, B=options.B, seed=options.seed)


def _pairwise_manifest(pairwise) -> dict | None:
    """How the side-by-side rankings were computed, for the manifest (None without them)."""
    if pairwise is None:
        return None
    return {"model": "Bradley-Terry per dimension, Davidson (1970) for ties; "
                     "log-strengths centred to 0", "players": pairwise.by,
            "bootstrap": {"B": pairwise.B, "seed": pairwise.seed, "resampling": "scenarios",
                          "interval": "percentile"},
            "inconsistent_judge_orders": pairwise.inconsistent,
            "judges": [{"name": j.name, "hash": j.hash} for j in pairwise.judges]}


def _ranking(engine: Engine, best: str | None, judges: pd.DataFrame,
             options: AnalysisOptions) -> dict | None:
    """The prediction-powered leaderboard (`h2h leaderboard`) with the best-calibrated judge
    (or the study's only judge); None without a judge."""
    from ..ppi_board import BoardOptions, ppi_leaderboard
    from ..ppi_study import board_frames, draws_info, study_draws

    names = sorted(judges["judge"].astype(str).unique()) if not judges.empty else []
    name = best or (names[0] if len(names) == 1 else None)
    if name is None:
        return None
    frames = board_frames(engine, judge=name)
    config_hash = frames.context["judge"].get("hash")
    context = {**frames.context, "active_draws": draws_info(engine, config_hash)}
    return ppi_leaderboard(frames.items, frames.human, frames.judge, frames.scales,
                           options=BoardOptions(B=options.B, seed=options.seed,
                                                level=options.ci),
                           draws=study_draws(engine, config_hash, frames.items),
                           context=context)


def _ranking_manifest(ranking: dict | None) -> dict | None:
    """How the model ranking was computed, for the manifest (None without a judge)."""
    if ranking is None:
        return None
    return {k: ranking["meta"][k] for k in ("judge", "estimator", "level", "B", "seed",
                                            "design", "human_value")}


def _rubric_order(engine: Engine) -> tuple[list[RubricDimension], list[str]]:
    """The rubric's dimensions (with the labels people read) and task families, in its
    order: every table and figure follows it."""
    from data.study import current_rubric

    rubric = current_rubric(engine)
    return ([RubricDimension(d.key, d.label, d.level, d.kind, d.min, d.max,
                             tuple(d.tasks) if d.tasks is not None else None)
             for d in rubric.dimensions], list(rubric.tasks))


def _best_judge(calib: dict[str, DimensionCalibration]) -> str | None:
    """The configuration that is best on the most dimensions (ties: higher mean QWK)."""
    wins: dict[str, list] = {}
    for res in calib.values():
        if b := res.verdict.best:
            wins.setdefault(b, []).append(res.configs[b].qwk.value or 0.0)
    if not wins:
        return None
    return max(wins, key=lambda k: (len(wins[k]), float(np.mean(wins[k]))))

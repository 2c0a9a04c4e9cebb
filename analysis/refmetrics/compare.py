"""Do the benchmark's metrics agree with psychologists? Metrics, judges and the human ceiling
under one set of agreement statistics, per rubric dimension.

**Item level.** Every score - a human's, a judge's, a metric's - is compared with the same
yardstick, the leave-one-out consensus of the humans (:mod:`analysis.ceiling`): for each human
``h`` and item ``i`` rated by ``h`` and another human, the mean ``c_hi`` of the *other* humans.
The human ceiling pools the pairs ``(x_hi, c_hi)``; a judge or a metric the pairs
``(s_i, c_hi)`` on the same (human, item) pairs. A metric's score lives on its own scale (BLEU
0-100, cosine -1..1), so only rank and linear correlation carry the comparison: Spearman's rho,
Kendall's tau-b and Pearson's r of the pooled pairs (:mod:`.correlation`). Kappa-type
statistics (QWK, alpha with the judge, exact agreement) need the rubric's scale and are not
computed for metrics. Everything is computed on the items that every compared judge and
metric scored, with one item bootstrap (``B``, ``seed``) shared by all rows, so the difference
of a row and the ceiling has a paired CI.

**System level.** Whether a metric ranks the companion models as the humans do
(:mod:`.system`): Kendall's tau-b of the model means and the share of pairwise orderings right,
with a scenario bootstrap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd

from ..aggregate import aggregate_samples
from ..ceiling import common_items
from ..layout import Ratings, as_ratings
from ..options import AnalysisOptions
from ..resample import item_weights, percentile_ci
from ..serialize import Interval
from .correlation import STATS, PairDesign, weighted_correlations
from .results import MetricComparison, MetricDimension, MetricRow, SystemAgreement
from .system import system_agreement

__all__ = ["Scored", "metric_dimension", "metric_comparison", "DESIGN", "KAPPA_NOTE"]

DESIGN = ("each score (a human's, a judge's, a metric's) against the mean of the other humans "
          "on the same item, pooled over every (human, item) pair; correlations only, on the "
          "items every compared judge and metric scored; one item bootstrap for all rows")
KAPPA_NOTE = ("kappa-type statistics (QWK, alpha with the judge, exact agreement) are not "
              "computed for metrics: their scores are continuous and on their own scale, not "
              "the rubric's")


@dataclass(frozen=True)
class Scored:
    """Per-item scores of one judge or metric, aligned to the humans' items (nan = none)."""

    name: str
    kind: Literal["judge", "metric"]
    scores: np.ndarray


def _interval(point: float, boots: np.ndarray | None, ci: float) -> Interval:
    if not np.isfinite(point):
        return Interval(None)
    lo, hi = percentile_ci(boots, ci) if boots is not None else (None, None)
    return Interval(float(point), lo, hi)


def metric_dimension(humans: Ratings, scored: Sequence[Scored], *, models=None,
                     scenarios=None, ordered: bool = True,
                     options: AnalysisOptions = AnalysisOptions()) -> MetricDimension:
    """Item- and system-level agreement of each judge and metric with the humans on one
    dimension (see the module). ``models``/``scenarios`` (aligned to ``humans.items``) enable
    the system level; ``ordered`` False (a nominal scale of three or more categories) makes
    correlations meaningless, and the block says so. Uses ``options``' B, seed, ci,
    min_units (the fewest items) and min_shared_items (see :func:`analysis.ceiling.loo_pairs`)."""
    B, seed, ci = options.B, options.seed, options.ci
    notes: list[str] = []
    if not ordered:
        notes.append("the scale is nominal with three or more categories: correlations "
                     "with an order do not apply")
        return MetricDimension("not estimable", 0, 0, B, seed, ci, (), tuple(notes))
    m = humans.matrix
    n_h = np.sum(~np.isnan(m), axis=1)
    present = [r for r in scored if np.any(~np.isnan(r.scores) & (n_h >= 2))]
    absent = [r for r in scored if not any(r is p for p in present)]
    for r in absent:
        notes.append(f"{r.name}: no score on items rated by two or more humans")
    items = common_items(m, [r.scores for r in present], min_humans=2,
                         min_shared_items=options.min_shared_items, basis="scored_by_all")
    dropped = int(np.sum(n_h >= 2) - items.rows.sum())
    if dropped and present:
        notes.append(f"{dropped} items rated by two or more humans lack a score from some "
                     "judge or metric and are left out, so every row is on the same items")
    pairs = items.pairs
    if pairs.left_out:
        notes.append(f"{len(pairs.left_out)} humans left out (fewer than "
                     f"{options.min_shared_items} items rated together with another human)")
    n_humans = int(np.unique(pairs.human).size)
    rows = [("human ceiling", "ceiling", None)] + [(r.name, r.kind, r) for r in present]
    rows += [(r.name, r.kind, "absent") for r in absent]
    if pairs.n_items < options.min_units:
        notes.append(f"only {pairs.n_items} items have every score and two or more "
                     f"human ratings (minimum {options.min_units})")
        return MetricDimension("not estimable", pairs.n_items, pairs.n_pairs, B, seed, ci,
                               tuple(_row(name, kind, None, None, ci, status="not estimable")
                                     for name, kind, _ in rows), tuple(notes),
                               n_humans=n_humans)
    used, item_idx = np.unique(pairs.item, return_inverse=True)
    design = PairDesign(item_idx, pairs.c, used.size)
    w = item_weights(used.size, B, seed) if B > 0 else None
    ones = np.ones((1, used.size))
    ceiling_boot = None
    out_rows: list[MetricRow] = []
    for name, kind, r in rows:
        if isinstance(r, str):
            out_rows.append(_row(name, kind, None, None, ci, status="no scores"))
            continue
        x = design.align(pairs.x if r is None else r.scores[pairs.item])
        point = {k: v[0] for k, v in weighted_correlations(design, x, ones).items()}
        boots = weighted_correlations(design, x, w) if w is not None else None
        if r is None:
            ceiling_boot, ceiling_point = boots, point
        minus = None
        if not np.isfinite(point["spearman"]):
            notes.append(f"{name}: correlations not estimable (its scores do not vary on "
                         "these items)" if np.ptp(x) == 0 else
                         f"{name}: correlations not estimable (the consensus does not vary "
                         "on these items)")
        if r is not None:
            minus = {k: _interval(point[k] - ceiling_point[k],
                                  None if boots is None else boots[k] - ceiling_boot[k], ci)
                     for k in STATS}
        out_rows.append(_row(name, kind, point, boots, ci, minus=minus))
    system = None
    if models is not None and scenarios is not None:
        system = _system(humans, present, models, scenarios, B=B, seed=seed, ci=ci)
    return MetricDimension("ok", pairs.n_items, pairs.n_pairs, B, seed, ci, tuple(out_rows),
                           tuple(notes), system, n_humans)


def _row(name: str, kind: str, point, boots, ci: float, status: str = "ok",
         minus: dict | None = None) -> MetricRow:
    stats = {k: Interval(None) if point is None else
             _interval(point[k], None if boots is None else boots[k], ci) for k in STATS}
    return MetricRow(name, kind, status, minus_ceiling=minus, **stats)


def _system(humans: Ratings, present: Sequence[Scored], models, scenarios, *, B: int,
            seed: int, ci: float) -> SystemAgreement:
    m = humans.matrix
    n_h = np.sum(~np.isnan(m), axis=1)
    ok = n_h >= 1
    for r in present:
        ok &= ~np.isnan(r.scores)
    models = np.asarray(models, dtype=object)
    scenarios = np.asarray(scenarios, dtype=object)
    ok &= pd.notna(models) & pd.notna(scenarios)
    with np.errstate(invalid="ignore"):
        human = np.nansum(m, axis=1) / np.where(n_h > 0, n_h, 1)
    res = system_agreement(human[ok], {r.name: r.scores[ok] for r in present}, models[ok],
                           scenarios[ok], B=B, seed=seed, ci=ci)
    return replace(res, kinds={r.name: r.kind for r in present})


def _per_item(df: pd.DataFrame, items: Sequence) -> np.ndarray:
    return (df.groupby("item_id")["score"].mean().reindex(list(items)).to_numpy(float)
            if not df.empty else np.full(len(items), np.nan))


def metric_comparison(ratings: pd.DataFrame, scales: Mapping, metrics: pd.DataFrame, *,
                      judges: pd.DataFrame | None = None, items: pd.DataFrame | None = None,
                      options: AnalysisOptions = AnalysisOptions()) -> MetricComparison:
    """Every dimension's comparison from long frames: ``ratings`` (item_id, rater, dimension,
    score; numeric codes), ``metrics`` (item_id, metric, score), ``judges`` (item_id, judge,
    dimension, score[, sample]; numeric codes, nan = unscored) and ``items`` (item_id, model,
    scenario) for the system level."""
    dims: dict[str, MetricDimension] = {}
    notes: list[str] = []
    names = sorted(metrics["metric"].astype(str).unique())
    if items is None or not {"model", "scenario"} <= set(items.columns):
        notes.append("system level not computed: the companion model of each item is "
                            "not known (it comes from the study, or a model column)")
    for dim, sc in scales.items():
        sub = ratings[ratings["dimension"].astype(str) == dim].dropna(subset=["score"])
        if sub.empty or sub["rater"].nunique() < 2:
            continue
        humans = as_ratings(sub.rename(columns={"item_id": "item"}))
        scored: list[Scored] = []
        if judges is not None and not judges.empty:
            jd = judges[judges["dimension"].astype(str) == dim]
            for jname, jg in jd.groupby(jd["judge"].astype(str)):
                per, _ = aggregate_samples(jg.rename(columns={"item_id": "item"}), sc.level,
                                           humans.items)
                scored.append(Scored(str(jname), "judge", per))
        for name in names:
            scored.append(Scored(name, "metric", _per_item(
                metrics[metrics["metric"].astype(str) == name], humans.items)))
        models = scen = None
        if items is not None and {"model", "scenario"} <= set(items.columns):
            ix = items.drop_duplicates("item_id").set_index("item_id")
            models = ix["model"].reindex(list(humans.items)).to_numpy(object)
            scen = ix["scenario"].reindex(list(humans.items)).to_numpy(object)
        ordered = sc.level != "nominal" or sc.binary or len(sc.values) == 2
        dims[dim] = metric_dimension(humans, scored, models=models, scenarios=scen,
                                     ordered=ordered, options=options)
    return MetricComparison(DESIGN, KAPPA_NOTE, dims, tuple(notes))

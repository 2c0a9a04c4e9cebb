"""Judge–human agreement for one judge configuration on one dimension, beside the human ceiling.

The judge faces the same yardstick as every human (:mod:`analysis.ceiling`): for each human
``h`` and item ``i`` the consensus of the *other* humans; the judge's score of ``i`` and ``h``'s
score are both compared with it, pooled over all (human, item) pairs. On those pairs: QWK and
linear kappa (weights on the score values), Pearson, Spearman, Kendall's tau-b, MAE, RMSE,
mean bias (judge - consensus), exact and within-one agreement with the other humans. The paired
item bootstrap of QWK(judge) - QWK(ceiling) and the alternative annotator test give the
verdict (:mod:`analysis.verdict`).

Besides: Bland–Altman limits of the judge against the per-item mean of all humans (bias ± 1.96
SD), alpha of the humans alone and with the judge added as one more rater, the judge's
confusion matrix against the human median, and, with several samples per item,
self-consistency. Samples are first aggregated per item: the lower median (which stays on the
scale) for ordered levels, the mode (smallest value on ties) for nominal ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from messages import Msg

from .aggregate import aggregate_samples, lower_medians
from .alpha import Level, alpha, alpha_from_matrix
from .alttest import AltTestResult, alt_test
from .ceiling import (
    CeilingComparison,
    ComparisonSet,
    common_items,
    compare_with_ceiling,
    pooled_metrics,
)
from .layout import Ratings
from .options import AnalysisOptions
from .results import POOLED, BlandAltman, Confusion, JudgeAgreement, SingleHuman
from .serialize import finite, settle
from .single_human import AGAINST, single_human_agreement
from .verdict import Verdict, replacement_verdict

__all__ = ["aggregate_samples", "JudgeMetrics", "judge_metrics", "METRIC_NAMES",
           "verdict_for", "agreement_block"]

METRIC_NAMES = ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "bias", "qwk",
                "linear_kappa", "exact", "within1")


@dataclass
class JudgeMetrics:
    metrics: dict
    alt: AltTestResult | None
    confusion: dict | None
    comparison: CeilingComparison | None = None
    verdict: Verdict | None = None
    notes: list[str] = field(default_factory=list)
    #: the items of the pooled statistics and of the comparison with the ceiling
    items: ComparisonSet | None = None
    #: against the one human of each item, where no item has two
    #: (:func:`analysis.single_human.single_human_agreement`)
    single_human: dict | None = None


def _bland_altman(judge: np.ndarray, m: np.ndarray) -> dict | None:
    n_h = np.sum(~np.isnan(m), axis=1)
    ok = ~np.isnan(judge) & (n_h > 0)
    if ok.sum() < 2:
        return None
    d = judge[ok] - np.nansum(m[ok], axis=1) / n_h[ok]
    bias, sd = float(np.mean(d)), float(np.std(d, ddof=1))
    return {"bias": bias, "low": bias - 1.96 * sd, "high": bias + 1.96 * sd,
            "n_items": int(ok.sum()), "against": "per-item mean of all humans"}


def verdict_for(comparison: CeilingComparison | None, alt: AltTestResult | None,
                matrix: np.ndarray, judge: np.ndarray, *, options: AnalysisOptions,
                humans_alpha: float | None = None, no_pairs: str | None = None) -> Verdict:
    """The replacement verdict of one judge on one dimension (the one rule everywhere): at
    least ``options.min_units`` items with a judge score and two or more human ratings; with
    the humans' α below ``options.alpha_min`` the verdict says so. ``no_pairs``: why there
    is no comparison, when it is not that no such item exists."""
    margin, min_items = options.margin, options.min_units
    if comparison is None or comparison.n_items == 0:
        return replacement_verdict(None, None, margin=margin, not_estimable=no_pairs or (
            "no scored judgments on items that two or more humans rated"))
    if comparison.n_items < min_items:
        return replacement_verdict(None, None, margin=margin, not_estimable=(
            f"only {comparison.n_items} items have a judge score and two or more human "
            f"ratings (minimum {min_items})"))
    rows = ~np.isnan(judge) & (np.sum(~np.isnan(matrix), axis=1) >= 2)
    share = float(np.max(np.sum(~np.isnan(matrix[rows]), axis=0)) / rows.sum())
    return replacement_verdict(comparison, alt, margin=margin, ci=options.ci,
                               max_human_share=share,
                               humans_alpha=humans_alpha, alpha_min=options.alpha_min)


def judge_metrics(humans: Ratings, judge: np.ndarray, level: Level, values: Sequence[float],
                  *, samples: np.ndarray | None = None,
                  options: AnalysisOptions = AnalysisOptions()) -> JudgeMetrics:
    """Every judge–human metric for one judge (per-item scores aligned to ``humans.items``),
    its comparison with the human ceiling (paired item bootstrap with ``options.B``
    resamples; none when it is 0) and the verdict. Humans with fewer than
    ``options.min_shared_items`` items rated together with another human are left out of the
    ceiling comparison (see :func:`analysis.ceiling.common_items`); a verdict says so when the
    humans' α is below ``options.alpha_min``. α with the judge is on every item a human
    rated (the judge added where it scored), the other statistics on the items it scored."""
    notes: list[str] = []
    m = humans.matrix
    judge = np.asarray(judge, float)
    n_h = np.sum(~np.isnan(m), axis=1)
    items = common_items(m, [judge], min_shared_items=options.min_shared_items)
    scored = items.rows
    missing = int(np.sum(np.isnan(judge) & (n_h > 0)))
    if not scored.any():
        notes.append("no scored judgments on the human-rated items: nothing to compare")
        metrics = {k: None for k in METRIC_NAMES}
        metrics.update(n_items=0, n_pairs=0, n_scored_items=0, bland_altman=None,
                       alpha_humans=finite(alpha(humans, level, values)), alpha_with_judge=None,
                       self_consistency_alpha=None)
        v = verdict_for(None, None, m, judge, options=options)
        return JudgeMetrics(metrics, None, None, None, v, notes, items)
    if missing:
        notes.append(Msg("{n} human-rated items have no judge score (unscored or missing)",
                         n=missing))
    pairs = items.pairs
    metrics = pooled_metrics(pairs, judge)
    metrics["n_scored_items"] = int(scored.sum())
    metrics["bland_altman"] = _bland_altman(judge, m)
    metrics["alpha_humans"] = finite(alpha(humans, level, values))
    metrics["alpha_with_judge"] = finite(alpha_from_matrix(np.column_stack([m, judge]), level,
                                                        values))
    if samples is not None:
        metrics["self_consistency_alpha"] = finite(alpha_from_matrix(samples, level, values))
    else:
        metrics["self_consistency_alpha"] = None
        notes.append(Msg("self_consistency_alpha: one sample per item"))
    single = None
    no_pairs = None
    multi = int(np.sum(scored & (n_h >= 2)))
    if pairs.n_pairs == 0 and multi:
        # humans with too few items shared with another human are left out of the pairs
        no_pairs = (f"every human rated fewer than {options.min_shared_items} items together "
                    f"with another human (the minimum for the leave-one-out comparison), so "
                    f"the {multi} judge-scored items with two or more human ratings cannot be "
                    "compared")
        notes.append(no_pairs)
    elif pairs.n_pairs == 0:
        notes.append("no judge-scored item has two or more human ratings: the leave-one-out "
                     "comparison is not possible")
        single = single_human_agreement(m, judge, values, B=options.B, seed=options.seed,
                                        ci=options.ci, min_items=options.min_units)
        if single is not None:
            notes.append("agreement with the one human who rated each item is under "
                         f"single_human ({single['n_items']} items; {AGAINST})")
    alt = alt_test(m, judge, scoring=options.scoring_for(level), epsilon=options.alt_epsilon,
                   human_names=tuple(str(r) for r in humans.raters))
    notes.extend(alt.notes)
    comparison = compare_with_ceiling(pairs, judge, B=options.B, seed=options.seed,
                                      ci=options.ci) if pairs.n_pairs else None
    v = verdict_for(comparison, alt, m, judge, options=options,
                    humans_alpha=metrics["alpha_humans"], no_pairs=no_pairs)
    return JudgeMetrics(metrics, alt, _confusion(m, judge, values), comparison, v, notes,
                        items, single)


def agreement_block(jm: JudgeMetrics, *, n_judgments: int = 0, n_unscored: int = 0,
                    notes: Sequence[str] = (), label: Callable[[float], str] | None = None
                    ) -> JudgeAgreement:
    """One judge's block of the analysis (``judges.<judge>.<dim>``) from its metrics, with its
    judgments counted and ``notes`` before the metrics' own; ``label`` names the confusion
    matrix's values on a scale of labels. NaN becomes None, and a note says so."""
    m = jm.metrics
    notes = [*notes, *jm.notes]
    ba, conf = m["bland_altman"], jm.confusion
    block = JudgeAgreement(
        **{k: m[k] for k in (*POOLED, "n_items", "n_pairs", "n_scored_items", "alpha_humans",
                             "alpha_with_judge", "self_consistency_alpha")},
        bland_altman=BlandAltman(**ba) if ba else None, alt_test=jm.alt,
        confusion=None if conf is None else Confusion(
            tuple(conf["values"]), conf["rows"], conf["columns"],
            tuple(tuple(row) for row in conf["matrix"]),
            tuple(label(v) for v in conf["values"]) if label else None),
        vs_ceiling=jm.comparison, verdict=jm.verdict, n_judgments=n_judgments,
        n_unscored=n_unscored, items=jm.items.label if jm.items else None,
        single_human=SingleHuman.from_dict(jm.single_human) if jm.single_human else None,
        status="no scored judgments" if m["n_items"] == 0 and not m.get("n_scored_items")
        else None)
    block = settle(block, notes)
    return replace(block, notes=tuple(notes))


def _confusion(m: np.ndarray, judge: np.ndarray, values: Sequence[float]) -> dict | None:
    n_h = np.sum(~np.isnan(m), axis=1)
    ok = (n_h > 0) & ~np.isnan(judge)
    if not ok.any():
        return None
    med = lower_medians(m[ok])
    vals = list(map(float, values))
    idx = {v: i for i, v in enumerate(vals)}
    mat = np.zeros((len(vals), len(vals)), int)
    for h, j in zip(med, judge[ok], strict=True):
        if h in idx and j in idx:
            mat[idx[h], idx[j]] += 1
    return {"values": vals, "rows": "human median (lower)", "columns": "judge",
            "matrix": mat.tolist()}

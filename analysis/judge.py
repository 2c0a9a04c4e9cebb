"""Judge–human agreement for one judge configuration on one dimension, beside the human ceiling.

The judge is read against the same yardsticks as the humans themselves:

* against the per-item mean of the humans: Pearson, Spearman, Kendall's tau-b, MAE, RMSE, mean
  bias (judge - human) and Bland–Altman limits (bias ± 1.96 SD of the differences);
* against each human in turn, averaged over humans: quadratic- and linear-weighted kappa,
  exact and within-one agreement;
* the **human ceiling** gives each human the same treatment: that human against the mean of the
  *other* humans (leave one out), and against each other human;
* alpha of the humans alone, and with the judge added as one more rater;
* the alternative annotator test; the judge's confusion matrix against the human median.

Several samples per item are first aggregated per item: the lower median (which stays on the
scale) for ordered levels, the mode (smallest value on ties) for nominal ones; the samples'
own alpha is reported as self-consistency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .alpha import Level, alpha, alpha_from_matrix
from .alttest import AltTestResult, Scoring, alt_test
from .chance import cohen_kappa
from .layout import Ratings

__all__ = ["aggregate_samples", "JudgeMetrics", "judge_metrics", "human_ceiling",
           "METRIC_NAMES"]

METRIC_NAMES = ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "bias", "qwk",
                "linear_kappa", "exact", "within1")


def _lower_median(x: np.ndarray) -> float:
    return float(np.quantile(x, 0.5, method="lower"))


def _mode(x: np.ndarray) -> float:
    vals, counts = np.unique(x, return_counts=True)
    return float(vals[np.argmax(counts)])


def aggregate_samples(scores: pd.DataFrame, level: Level, items: Sequence
                      ) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-item judge score (aligned to ``items``; nan where unscored) and, with several
    samples, the items × samples matrix for self-consistency."""
    df = scores.dropna(subset=["score"])
    agg = _mode if level == "nominal" else _lower_median
    per_item = df.groupby("item")["score"].agg(lambda s: agg(s.to_numpy(float)))
    out = per_item.reindex(list(items)).to_numpy(float)
    samples = None
    if "sample" in df.columns and df["sample"].nunique() > 1:
        piv = df.pivot_table(index="item", columns="sample", values="score", aggfunc="first")
        samples = piv.reindex(list(items)).to_numpy(float)
    return out, samples


def _corr_block(x: np.ndarray, y: np.ndarray, notes: list[str], who: str) -> dict:
    """Metrics of x against a reference y (paired, no nans)."""
    out: dict[str, float | None] = {k: None for k in ("pearson", "spearman", "kendall_tau_b",
                                                      "mae", "rmse", "bias")}
    out["bland_altman"] = None
    if x.size == 0:
        return out
    d = x - y
    out["mae"] = float(np.mean(np.abs(d)))
    out["rmse"] = float(np.sqrt(np.mean(d ** 2)))
    out["bias"] = float(np.mean(d))
    if x.size >= 2:
        sd = float(np.std(d, ddof=1))
        out["bland_altman"] = {"bias": out["bias"], "low": out["bias"] - 1.96 * sd,
                               "high": out["bias"] + 1.96 * sd}
    if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        out["pearson"] = float(stats.pearsonr(x, y).statistic)
        out["spearman"] = float(stats.spearmanr(x, y).statistic)
        out["kendall_tau_b"] = float(stats.kendalltau(x, y, variant="b").statistic)
    elif x.size:
        notes.append(f"{who}: correlations undefined (fewer than 3 items or no variance)")
    return out


def _pair_block(pairs: list[tuple[np.ndarray, np.ndarray]], values: Sequence[float]) -> dict:
    """Kappas and agreement of (x, reference) pairs, averaged over the pairs."""
    qwk, lin, exact, within = [], [], [], []
    for x, y in pairs:
        if x.size < 2:
            continue
        k2 = cohen_kappa(x, y, values, "quadratic")
        k1 = cohen_kappa(x, y, values, "linear")
        if np.isfinite(k2):
            qwk.append(k2)
        if np.isfinite(k1):
            lin.append(k1)
        exact.append(float(np.mean(x == y)))
        within.append(float(np.mean(np.abs(x - y) <= _step(values))))

    def mean(v: list[float]) -> float | None:
        return float(np.mean(v)) if v else None

    return {"qwk": mean(qwk), "linear_kappa": mean(lin), "exact": mean(exact),
            "within1": mean(within)}


def _step(values: Sequence[float]) -> float:
    v = np.sort(np.asarray(values, float))
    return float(np.min(np.diff(v))) if v.size > 1 else 1.0


def _others_mean(m: np.ndarray, j: int) -> np.ndarray:
    others = np.delete(m, j, axis=1)
    n = np.sum(~np.isnan(others), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.nansum(others, axis=1) / np.maximum(n, 1), np.nan)


@dataclass
class JudgeMetrics:
    metrics: dict
    alt: AltTestResult | None
    confusion: dict | None
    notes: list[str] = field(default_factory=list)


def judge_metrics(humans: Ratings, judge: np.ndarray, level: Level, values: Sequence[float],
                  *, samples: np.ndarray | None = None, alt_epsilon: float = 0.2,
                  alt_scoring: Scoring | None = None) -> JudgeMetrics:
    """Every judge–human metric for one judge (per-item scores aligned to ``humans.items``)."""
    notes: list[str] = []
    m = humans.matrix
    n_h = np.sum(~np.isnan(m), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        hmean = np.where(n_h > 0, np.nansum(m, axis=1) / np.maximum(n_h, 1), np.nan)
    ok = ~np.isnan(judge) & (n_h > 0)
    unscored = int(np.sum(np.isnan(judge) & (n_h > 0)))
    if unscored:
        notes.append(f"{unscored} human-rated items have no judge score (unscored or missing)")
    out = _corr_block(judge[ok], hmean[ok], notes, "judge")
    pairs = []
    for j in range(humans.n_raters):
        both = ok & ~np.isnan(m[:, j])
        pairs.append((judge[both], m[both, j]))
    out.update(_pair_block(pairs, values))
    out["n_items"] = int(ok.sum())
    out["alpha_humans"] = _nn(alpha(humans, level, values))
    with_judge = np.column_stack([m, judge])
    out["alpha_with_judge"] = _nn(alpha_from_matrix(with_judge, level, values))
    if samples is not None:
        out["self_consistency_alpha"] = _nn(alpha_from_matrix(samples, level, values))
    else:
        out["self_consistency_alpha"] = None
        notes.append("self_consistency_alpha: one sample per item")
    scoring: Scoring = alt_scoring or ("accuracy" if level == "nominal" else "neg_rmse")
    alt = alt_test(m, judge, scoring=scoring, epsilon=alt_epsilon,
                   human_names=tuple(str(r) for r in humans.raters))
    notes.extend(alt.notes)
    conf = _confusion(m, judge, values)
    return JudgeMetrics(out, alt, conf, notes)


def _nn(x: float) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None


def _confusion(m: np.ndarray, judge: np.ndarray, values: Sequence[float]) -> dict | None:
    n_h = np.sum(~np.isnan(m), axis=1)
    ok = (n_h > 0) & ~np.isnan(judge)
    if not ok.any():
        return None
    med = np.array([np.quantile(row[~np.isnan(row)], 0.5, method="lower") for row in m[ok]])
    vals = list(map(float, values))
    idx = {v: i for i, v in enumerate(vals)}
    mat = np.zeros((len(vals), len(vals)), int)
    for h, j in zip(med, judge[ok], strict=True):
        if h in idx and j in idx:
            mat[idx[h], idx[j]] += 1
    return {"values": vals, "rows": "human median (lower)", "columns": "judge",
            "matrix": mat.tolist()}


def human_ceiling(humans: Ratings, values: Sequence[float]) -> tuple[dict, list[str]]:
    """The judge metrics computed for each human against the other humans, averaged."""
    notes: list[str] = []
    m = humans.matrix
    blocks = []
    pairs = []
    for j in range(humans.n_raters):
        om = _others_mean(m, j)
        ok = ~np.isnan(m[:, j]) & ~np.isnan(om)
        if ok.sum() == 0:
            continue
        blocks.append(_corr_block(m[ok, j], om[ok], [], f"human {humans.raters[j]}"))
        for k in range(j + 1, humans.n_raters):
            both = ~np.isnan(m[:, j]) & ~np.isnan(m[:, k])
            if both.sum() >= 2:
                pairs.append((m[both, j], m[both, k]))
    out: dict = {}
    for key in ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "bias"):
        vals = [b[key] for b in blocks if b[key] is not None]
        out[key] = float(np.mean(vals)) if vals else None
    if not blocks:
        notes.append("human ceiling: needs items rated by at least two humans")
    out.update(_pair_block(pairs, values))
    out["n_humans"] = len(blocks)
    return out, notes

"""The human ceiling: every human, and the judge, against the same leave-one-out consensus.

For each human ``h`` and each item ``i`` that ``h`` rated and at least one other human rated,
the yardstick is the consensus of the *other* humans, ``c_hi = mean of x_h'i over h' != h``.
The human contributes the pair ``(x_hi, c_hi)``; the judge, on the same item, the pair
``(J_i, c_hi)``. Both sets of pairs are pooled over all (human, item) — so a human who rated
140 items weighs 70 times as much as one who rated 2 — and every statistic is computed once on
the pooled pairs, never as an unweighted mean of per-human or per-pair statistics.

The agreement statistic is Cohen's quadratic-weighted kappa with weights on the score values,
written for paired values ``(x_p, y_p)``, p = 1..P:

    QWK = 1 - (1/P) sum_p (x_p - y_p)^2 / [ (1/P^2) sum_p sum_q (x_p - y_q)^2 ]
        = 1 - mean (x - y)^2 / ( var x + var y + (mean x - mean y)^2 )      (population moments)

which equals Cohen's (1968) kappa with quadratic weights when both are on an evenly spaced
scale (the weights' normalisation cancels), and stays defined for a consensus that falls
between scale points; it is Lin's (1989) concordance correlation. The linear analogue replaces
squares by absolute differences. ``exact`` and ``within1`` count, per pair, the share of the
other humans on the item that the human's (or the judge's) score matches exactly or within one
scale unit.

Because each item's pairs enter every statistic through a few sums, an item bootstrap is one
matrix product of resampling weights with per-item sums, and the judge and the ceiling are
computed from the same resamples: their difference is a paired bootstrap.

References
----------
Cohen, J. (1968). Weighted kappa. Psychological Bulletin, 70(4), 213-220.
Lin, L. I.-K. (1989). A concordance correlation coefficient to evaluate reproducibility.
Biometrics, 45(1), 255-268.
Wellek, S. (2010). Testing Statistical Hypotheses of Equivalence and Noninferiority (2nd ed.).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from .resample import item_bootstrap_sums, percentile_ci
from .serialize import Interval, finite

__all__ = ["LooPairs", "loo_pairs", "ComparisonSet", "common_items", "ItemBasis",
           "value_qwk", "pooled_metrics", "Interval",
           "CeilingComparison", "compare_with_ceiling", "human_ceiling", "pair_sums",
           "qwk_from_sums", "mae_from_sums"]


@dataclass(frozen=True)
class LooPairs:
    """Every (human, item) rating with the mean of the other humans' ratings of that item.

    ``matrix`` is the items × humans matrix the pairs were formed from (the humans who rated
    too few items with others already left out); ``kept`` maps its columns to the caller's,
    and ``left_out`` lists the caller's columns that were left out."""

    item: np.ndarray
    human: np.ndarray
    x: np.ndarray
    c: np.ndarray
    matrix: np.ndarray
    kept: np.ndarray
    left_out: tuple[int, ...] = ()

    @property
    def n_pairs(self) -> int:
        return int(self.x.size)

    @property
    def n_items(self) -> int:
        return int(np.unique(self.item).size)

    def subset(self, keep: np.ndarray) -> LooPairs:
        return LooPairs(self.item[keep], self.human[keep], self.x[keep], self.c[keep],
                        self.matrix, self.kept, self.left_out)


def _enough(m: np.ndarray, min_shared_items: int) -> np.ndarray:
    """Columns (humans) that rated at least ``min_shared_items`` items that another kept human
    also rated; leaving a human out can take others below the minimum, hence the loop."""
    keep = np.ones(m.shape[1], bool)
    while True:
        has = ~np.isnan(m[:, keep])
        shared = has & (has.sum(axis=1) >= 2)[:, None]
        ok = shared.sum(axis=0) >= min_shared_items
        if ok.all():
            return keep
        idx = np.flatnonzero(keep)
        keep[idx[~ok]] = False


def loo_pairs(matrix: np.ndarray, rows: np.ndarray | None = None,
              min_shared_items: int = 1) -> LooPairs:
    """The pooled leave-one-out design of an items × humans matrix (nan = not rated),
    optionally only on the items where ``rows`` is true.

    A human who rated fewer than ``min_shared_items`` items that another human also rated is left
    out — as a rater and as part of the others' consensus — because a handful of items cannot
    say how well that human agrees (the alternative annotator test has the same rule at 30
    items); the choice of humans is made on all items, before ``rows`` restricts them.
    """
    m = np.asarray(matrix, float)
    keep = _enough(m, min_shared_items)
    left_out = tuple(int(j) for j in np.flatnonzero(~keep))
    m = m[:, keep]
    has = ~np.isnan(m)
    n = has.sum(axis=1)
    ok = (n >= 2) if rows is None else (n >= 2) & rows
    item, human = np.nonzero(has & ok[:, None])
    x = m[item, human]
    total = np.nansum(m, axis=1)
    c = (total[item] - x) / (n[item] - 1)
    return LooPairs(item, human, x, c, m, np.flatnonzero(keep), left_out)


ItemBasis = Literal["rated_by_two", "scored", "scored_by_all"]

# what each kind of item set is, in the words a table or a page prints beside its numbers
_BASIS_TEXT = {
    "rated_by_two": "the items two or more humans rated",
    "scored": "the items the judge scored that two or more humans rated",
    "scored_by_all": "the items every compared judge or metric scored",
}


@dataclass(frozen=True)
class ComparisonSet:
    """The items a comparison with the humans is computed on, and their pooled leave-one-out
    pairs: one definition for the human ceiling, each judge, the calibration of several
    configurations and the metrics comparison (:func:`common_items`).

    ``rows`` marks the items of the set among the humans' items (rated by ``min_humans`` or
    more humans and scored by every score given); ``pairs`` are the leave-one-out pairs on
    them (items two or more kept humans rated); ``basis`` says which set it is."""

    rows: np.ndarray
    pairs: LooPairs
    basis: ItemBasis

    @property
    def n_items(self) -> int:
        """Items in the set (those with a leave-one-out pair: ``pairs.n_items``)."""
        return int(self.rows.sum())

    @property
    def label(self) -> str:
        """Which items these are, in words."""
        return _BASIS_TEXT[self.basis]


def common_items(matrix: np.ndarray, scores: Sequence[np.ndarray] = (), *,
                 min_shared_items: int = 1, min_humans: int = 1,
                 basis: ItemBasis | None = None) -> ComparisonSet:
    """The items of a comparison: rated by at least ``min_humans`` humans and scored by
    every one of ``scores`` (per-item scores aligned to the matrix's rows, nan = none), with
    their leave-one-out pairs (:func:`loo_pairs`; a human with fewer than
    ``min_shared_items`` items rated together with another human is left out, chosen on all
    items). Without scores it is the human ceiling's set (``rated_by_two``); with one, a
    judge's (``scored``); with several, the items all of them scored (``scored_by_all``).

    Examples
    --------
    Three items, two humans; the judge scored the first two:

    >>> m = np.array([[1., 2.], [3., 3.], [4., np.nan]])
    >>> s = common_items(m, [np.array([1., 3., np.nan])])
    >>> s.rows.tolist(), s.pairs.n_pairs, s.label
    ([True, True, False], 4, 'the items the judge scored that two or more humans rated')
    """
    m = np.asarray(matrix, float)
    rows = np.sum(~np.isnan(m), axis=1) >= min_humans
    for x in scores:
        rows &= ~np.isnan(np.asarray(x, float))
    if basis is None:
        basis = "rated_by_two" if not scores else "scored" if len(scores) == 1 else \
            "scored_by_all"
    return ComparisonSet(rows, loo_pairs(m, rows=rows, min_shared_items=min_shared_items),
                         basis)


def value_qwk(x: np.ndarray, y: np.ndarray) -> float:
    """Quadratic-weighted kappa of paired values with weights on the values (see module).

    Examples
    --------
    Two raters on 3 items, (1, 1), (2, 3), (3, 3): mean squared difference 1/3; variances 2/3
    and 8/9, means 2 and 7/3, so QWK = 1 - (1/3) / (2/3 + 8/9 + 1/9) = 1 - 1/5 = 0.8, which is
    Cohen's quadratic kappa of the same ratings on the scale 1..3.

    >>> round(value_qwk(np.array([1., 2., 3.]), np.array([1., 3., 3.])), 12)
    0.8
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size == 0:
        return float("nan")
    den = x.var() + y.var() + (x.mean() - y.mean()) ** 2
    return float(1.0 - np.mean((x - y) ** 2) / den) if den > 0 else float("nan")


def _linear_kappa(x: np.ndarray, y: np.ndarray) -> float:
    """1 - mean |x - y| / mean over all (p, q) of |x_p - y_q| (values as weights)."""
    if x.size == 0:
        return float("nan")
    ux, cx = np.unique(x, return_counts=True)
    uy, cy = np.unique(y, return_counts=True)
    expected = float((cx[:, None] * cy[None, :] * np.abs(ux[:, None] - uy[None, :])).sum()
                     / (x.size * y.size))
    return float(1.0 - np.mean(np.abs(x - y)) / expected) if expected > 0 else float("nan")


def _matches(pairs: LooPairs, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the share of the *other* humans on the item whose score equals ``score``
    and is within one scale unit of it."""
    rows = pairs.matrix[pairs.item]
    others = ~np.isnan(rows)
    others[np.arange(pairs.n_pairs), pairs.human] = False
    with np.errstate(invalid="ignore"):
        diff = np.abs(rows - score[:, None])
    k = others.sum(axis=1)
    exact = np.sum((diff == 0) & others, axis=1) / k
    within = np.sum((diff <= 1.0 + 1e-9) & others, axis=1) / k
    return exact, within


def pooled_metrics(pairs: LooPairs, score: np.ndarray | None = None) -> dict:
    """Agreement of the humans (``score`` None) or of a per-item ``score`` (the judge) with the
    leave-one-out consensus, on the pooled pairs."""
    x = pairs.x if score is None else np.asarray(score, float)[pairs.item]
    c = pairs.c
    out: dict = {"n_items": pairs.n_items, "n_pairs": pairs.n_pairs}
    keys = ("qwk", "linear_kappa", "pearson", "spearman", "kendall_tau_b", "mae", "rmse",
            "bias", "exact", "within1")
    if x.size == 0:
        return {**{k: None for k in keys}, **out}
    d = x - c
    exact, within = _matches(pairs, x)
    out.update({"qwk": value_qwk(x, c), "linear_kappa": _linear_kappa(x, c),
                "mae": float(np.mean(np.abs(d))), "rmse": float(np.sqrt(np.mean(d ** 2))),
                "bias": float(np.mean(d)), "exact": float(np.mean(exact)),
                "within1": float(np.mean(within))})
    if x.size >= 3 and np.ptp(x) > 0 and np.ptp(c) > 0:
        out["pearson"] = float(stats.pearsonr(x, c).statistic)
        out["spearman"] = float(stats.spearmanr(x, c).statistic)
        out["kendall_tau_b"] = float(stats.kendalltau(x, c, variant="b").statistic)
    else:
        out.update(pearson=None, spearman=None, kendall_tau_b=None)
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v)
            for k, v in out.items()}


_N_SUMS = 7  # n, sum x, sum x^2, sum c, sum c^2, sum (x - c)^2, sum |x - c|


def pair_sums(pairs: LooPairs, x: np.ndarray, n_rows: int) -> np.ndarray:
    """Per-item sums (rows of the matrix × 7) from which QWK and MAE of (x, c) follow."""
    c = pairs.c
    cols = (np.ones_like(x), x, x * x, c, c * c, (x - c) ** 2, np.abs(x - c))
    out = np.zeros((n_rows, _N_SUMS))
    for j, v in enumerate(cols):
        out[:, j] = np.bincount(pairs.item, weights=v, minlength=n_rows)
    return out


def qwk_from_sums(s: np.ndarray) -> np.ndarray:
    """QWK from (..., 7) sums (the pooled pairs of one resample per row)."""
    n = s[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, mc = s[..., 1] / n, s[..., 3] / n
        den = (s[..., 2] / n - mx ** 2) + (s[..., 4] / n - mc ** 2) + (mx - mc) ** 2
        return np.where(den > 1e-12, 1.0 - (s[..., 5] / n) / den, np.nan)


def mae_from_sums(s: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return s[..., 6] / s[..., 0]


@dataclass(frozen=True)
class CeilingComparison:
    """The judge's QWK and the human ceiling's on the same items, and their paired difference
    (judge - ceiling) with its item-bootstrap CI and standard deviation over resamples."""

    judge: Interval
    ceiling: Interval
    diff: Interval
    diff_sd: float | None
    n_items: int
    n_pairs: int
    B: int
    seed: int

    def as_dict(self) -> dict:
        return {"judge_qwk": self.judge.as_dict(), "ceiling_qwk": self.ceiling.as_dict(),
                "difference": {**self.diff.as_dict(), "sd": self.diff_sd},
                "n_items": self.n_items, "n_pairs": self.n_pairs, "B": self.B,
                "seed": self.seed}


def compare_with_ceiling(pairs: LooPairs, judge: np.ndarray, *, B: int, seed: int,
                         ci: float = 0.95) -> CeilingComparison:
    """Judge vs human ceiling on the pairs whose item the judge scored, with an item
    bootstrap (``B`` resamples of those items, ``seed``) shared by both: a paired CI."""
    judge = np.asarray(judge, float)
    sub = pairs.subset(~np.isnan(judge[pairs.item]))
    n_rows = pairs.matrix.shape[0]
    s_h = pair_sums(sub, sub.x, n_rows)
    s_j = pair_sums(sub, judge[sub.item], n_rows)
    j_val = finite(qwk_from_sums(s_j.sum(axis=0)))
    c_val = finite(qwk_from_sums(s_h.sum(axis=0)))
    d_val = None if j_val is None or c_val is None else j_val - c_val
    boot = None
    if B > 0 and sub.n_items >= 2:
        used = np.unique(sub.item)
        boot = item_bootstrap_sums(np.hstack([s_h, s_j])[used], B, seed)
    if boot is None:
        none = Interval(None, None, None)
        return CeilingComparison(Interval(j_val, None, None), Interval(c_val, None, None),
                                 Interval(d_val, None, None) if d_val is not None else none,
                                 None, sub.n_items, sub.n_pairs, B, seed)
    qc, qj = qwk_from_sums(boot[:, :_N_SUMS]), qwk_from_sums(boot[:, _N_SUMS:])
    diff = qj - qc
    ok = diff[np.isfinite(diff)]
    return CeilingComparison(Interval(j_val, *percentile_ci(qj, ci)),
                             Interval(c_val, *percentile_ci(qc, ci)),
                             Interval(d_val, *percentile_ci(diff, ci)),
                             float(np.std(ok, ddof=1)) if ok.size > 1 else None,
                             sub.n_items, sub.n_pairs, B, seed)


def human_ceiling(matrix: np.ndarray, *, B: int = 0, seed: int = 0, ci: float = 0.95,
                  min_shared_items: int = 1) -> dict:
    """Pooled leave-one-out metrics of the humans, with item-bootstrap CIs of QWK and MAE;
    ``left_out`` lists the humans (column indices) with fewer than ``min_shared_items`` items
    rated together with another human."""
    pairs = common_items(matrix, min_shared_items=min_shared_items, min_humans=2).pairs
    out = pooled_metrics(pairs)
    out["n_humans"] = int(np.unique(pairs.human).size)
    out["left_out"] = list(pairs.left_out)
    out["qwk_ci"] = {"low": None, "high": None}
    out["mae_ci"] = {"low": None, "high": None}
    if B > 0 and pairs.n_items >= 2:
        s = pair_sums(pairs, pairs.x, matrix.shape[0])
        boot = item_bootstrap_sums(s[np.unique(pairs.item)], B, seed)
        out["qwk_ci"] = dict(zip(("low", "high"), percentile_ci(qwk_from_sums(boot), ci),
                                 strict=True))
        out["mae_ci"] = dict(zip(("low", "high"), percentile_ci(mae_from_sums(boot), ci),
                                 strict=True))
    return out

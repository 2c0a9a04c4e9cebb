"""Per-rater diagnostics, test–retest on repeated items, and binary-dimension checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .alpha import Level, alpha
from .chance import cohen_kappa
from .layout import Ratings, as_ratings
from .serialize import finite

__all__ = ["RaterDiagnostics", "rater_diagnostics", "retest_agreement", "RetestResult",
           "binary_checks", "BinaryChecks"]


@dataclass(frozen=True)
class RaterDiagnostics:
    n: int
    mean: float | None
    sd: float | None
    alpha_without: float | None
    corr_with_others: float | None


def rater_diagnostics(r: Ratings, level: Level, values: Sequence[float]
                      ) -> dict[str, RaterDiagnostics]:
    """For each rater: items rated, mean and SD (leniency), alpha without them, and the
    Pearson correlation of their scores with the mean of the other raters on the same items."""
    out: dict[str, RaterDiagnostics] = {}
    m = r.matrix
    for j, name in enumerate(r.raters):
        mine = m[:, j]
        has = ~np.isnan(mine)
        others = np.delete(m, j, axis=1)
        n_other = np.sum(~np.isnan(others), axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            other_mean = np.where(n_other > 0, np.nansum(others, axis=1) / np.maximum(n_other, 1),
                                  np.nan)
        both = has & (n_other > 0)
        corr = float("nan")
        if both.sum() >= 3 and np.std(mine[both]) > 0 and np.std(other_mean[both]) > 0:
            corr = float(np.corrcoef(mine[both], other_mean[both])[0, 1])
        scores = mine[has]
        out[str(name)] = RaterDiagnostics(
            n=int(has.sum()),
            mean=finite(scores.mean()) if scores.size else None,
            sd=finite(scores.std(ddof=1)) if scores.size > 1 else None,
            alpha_without=finite(alpha(r.without(name), level, values)) if r.n_raters > 2 else None,
            corr_with_others=finite(corr))
    return out


@dataclass(frozen=True)
class RetestResult:
    n_pairs: int
    exact: float | None
    within1: float | None
    alpha: float | None
    qwk: float | None
    per_rater: dict[str, dict]


def retest_agreement(first: pd.DataFrame, second: pd.DataFrame, level: Level,
                values: Sequence[float]) -> RetestResult:
    """Agreement of raters with themselves on repeated (rater, item) pairs.

    ``first`` and ``second`` are long frames (item, rater, score) of the first and the repeated
    rating; pairs present in both with two scores are compared. Alpha treats the two occasions
    as two coders; QWK is the quadratic-weighted kappa between occasions.
    """
    a = first.rename(columns={"score": "s1"})[["item", "rater", "s1"]]
    b = second.rename(columns={"score": "s2"})[["item", "rater", "s2"]]
    pairs = a.merge(b, on=["item", "rater"]).dropna(subset=["s1", "s2"])
    if pairs.empty:
        return RetestResult(0, None, None, None, None, {})
    d = np.abs(pairs["s1"].to_numpy(float) - pairs["s2"].to_numpy(float))
    occ = pd.concat([pairs.assign(item=pairs["rater"].astype(str) + "|" + pairs["item"].astype(str),
                                  rater="first", score=pairs["s1"]),
                     pairs.assign(item=pairs["rater"].astype(str) + "|" + pairs["item"].astype(str),
                                  rater="second", score=pairs["s2"])])
    al = alpha(as_ratings(occ), level, values)
    qwk = cohen_kappa(pairs["s1"].to_numpy(float), pairs["s2"].to_numpy(float), values,
                      "quadratic")
    per = {}
    for rater, g in pairs.groupby("rater"):
        dd = np.abs(g["s1"].to_numpy(float) - g["s2"].to_numpy(float))
        per[str(rater)] = {"n": int(len(g)), "exact": float(np.mean(dd == 0)),
                           "within1": float(np.mean(dd <= 1))}
    return RetestResult(int(len(pairs)), float(np.mean(d == 0)), float(np.mean(d <= 1)),
                        finite(al), finite(qwk), per)


@dataclass(frozen=True)
class BinaryChecks:
    prevalence: float | None
    raters: dict[str, dict]


def binary_checks(r: Ratings, positive: float = 1.0) -> BinaryChecks:
    """Prevalence of the positive value, and each rater's sensitivity and specificity against
    the strict majority of the other raters on each item (ties among the others are skipped)."""
    m = r.matrix
    obs = m[~np.isnan(m)]
    prev = float(np.mean(obs == positive)) if obs.size else None
    out: dict[str, dict] = {}
    for j, name in enumerate(r.raters):
        mine = m[:, j]
        others = np.delete(m, j, axis=1)
        pos = np.sum(others == positive, axis=1)
        tot = np.sum(~np.isnan(others), axis=1)
        neg = tot - pos
        ref = np.where(pos > neg, 1.0, np.where(neg > pos, 0.0, np.nan))
        ok = ~np.isnan(mine) & ~np.isnan(ref)
        me = (mine[ok] == positive).astype(float)
        rf = ref[ok]
        tp = float(np.sum((me == 1) & (rf == 1)))
        fn = float(np.sum((me == 0) & (rf == 1)))
        tn = float(np.sum((me == 0) & (rf == 0)))
        fp = float(np.sum((me == 1) & (rf == 0)))
        out[str(name)] = {
            "n": int(ok.sum()),
            "sensitivity": tp / (tp + fn) if tp + fn else None,
            "specificity": tn / (tn + fp) if tn + fp else None,
        }
    return BinaryChecks(prev, out)

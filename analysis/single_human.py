"""A judge against the one human who rated each item: the usual budget design, where no item
has a second human and so no leave-one-out consensus, no human ceiling and no alternative
annotator test exist.

On the items with exactly one human rating and a judge score, the judge's per-item score is
paired with that human's rating: Pearson, Spearman, Kendall's tau-b, MAE, RMSE, QWK (weights
on the score values, as everywhere in :mod:`analysis.ceiling`) and Cohen's unweighted kappa on
the full scale, each with a percentile CI from an item bootstrap (the seeded resamples of
:func:`analysis.resample.item_weights`). The block is marked "against one human per item; no
ceiling": a single human's ratings carry that human's own noise and severity, so these values
understate what the judge would show against a consensus, and there is nothing to set them
beside.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from .ceiling import value_qwk
from .chance import cohen_kappa
from .resample import item_weights, percentile_ci

__all__ = ["AGAINST", "STATISTICS", "single_human_agreement"]

AGAINST = "against one human per item; no ceiling"
STATISTICS = ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "qwk", "kappa")


def _point(x: np.ndarray, y: np.ndarray, values: Sequence[float]) -> dict[str, float]:
    d = x - y
    out = {"mae": float(np.mean(np.abs(d))), "rmse": float(np.sqrt(np.mean(d ** 2))),
           "qwk": value_qwk(x, y), "kappa": cohen_kappa(x, y, values)}
    if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        out["pearson"] = float(stats.pearsonr(x, y).statistic)
        out["spearman"] = float(stats.spearmanr(x, y).statistic)
        out["kendall_tau_b"] = float(stats.kendalltau(x, y, variant="b").statistic)
    else:
        out.update(pearson=float("nan"), spearman=float("nan"), kendall_tau_b=float("nan"))
    return out


def single_human_agreement(matrix: np.ndarray, judge: np.ndarray, values: Sequence[float],
                           *, B: int = 1000, seed: int = 0, ci: float = 0.95,
                           min_items: int = 5) -> dict | None:
    """The judge against the single human of each item (items × humans ``matrix``; per-item
    ``judge`` scores aligned to its rows). None when no judge-scored item has exactly one
    human rating.

    Returns ``{"against", "n_items", "B", "seed", <statistic>: {"value", "low", "high"},
    "notes"}``; values are None (with a note) below ``min_items`` items or without variance,
    CIs None when ``B`` is 0.

    Examples
    --------
    >>> m = np.array([[1.], [2.], [3.], [4.], [5.], [3.]])
    >>> r = single_human_agreement(m, np.array([1., 2., 3., 4., 5., 4.]), [1, 2, 3, 4, 5], B=0)
    >>> r["against"], r["n_items"], r["mae"]["value"]
    ('against one human per item; no ceiling', 6, 0.16666666666666666)
    """
    m = np.asarray(matrix, float)
    j = np.asarray(judge, float)
    one = (np.sum(~np.isnan(m), axis=1) == 1) & ~np.isnan(j)
    if not one.any():
        return None
    x = j[one]
    y = np.nanmax(m[one], axis=1)
    out: dict = {"against": AGAINST, "n_items": int(one.sum()), "B": B, "seed": seed,
                 "notes": []}
    if x.size < min_items:
        out["notes"].append(f"only {x.size} judge-scored items rated by one human (minimum "
                            f"{min_items}): not estimable")
        return {**out, **{k: {"value": None, "low": None, "high": None} for k in STATISTICS}}
    point = _point(x, y, values)
    boots = {k: np.full(B, np.nan) for k in STATISTICS}
    if B > 0:
        w = item_weights(x.size, B, seed)
        for b in range(B):
            idx = np.repeat(np.arange(x.size), w[b].astype(int))
            with np.errstate(invalid="ignore", divide="ignore"):
                for k, v in _point(x[idx], y[idx], values).items():
                    boots[k][b] = v
    else:
        out["notes"].append("bootstrap skipped (B = 0): no CIs")
    for k in STATISTICS:
        v = point[k]
        lo, hi = percentile_ci(boots[k], ci) if B > 0 else (None, None)
        out[k] = {"value": v if np.isfinite(v) else None, "low": lo, "high": hi}
        if not np.isfinite(v):
            out["notes"].append(f"{k}: not estimable (no variance in the judge's or the "
                                "human's scores)")
    return out

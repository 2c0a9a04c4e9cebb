"""Shared item-bootstrap machinery: one weight matrix, many statistics, paired by design.

Every statistic in a calibration comparison is computed from the same resampled items, so the
difference between two judge configurations is a *paired* bootstrap. Each resample is a vector
of item weights (how often each item was drawn), and the statistics are written as weighted
sums, so all B resamples are evaluated with a few matrix products.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .alpha import Level, _alpha_from_o, _parts_from_counts
from .chance import agreement_weights
from .layout import counts_matrix

__all__ = ["item_weights", "weighted_kappa", "weighted_alpha", "weighted_mean",
           "percentile_ci", "two_sided_p"]


def item_weights(n_items: int, B: int, seed: int) -> np.ndarray:
    """(B, n) draw counts of a seeded item bootstrap (each row sums to n)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=B).astype(float)


def weighted_kappa(w: np.ndarray, a: np.ndarray, b: np.ndarray, values: Sequence[float],
                   kind: str = "quadratic") -> np.ndarray:
    """Cohen's weighted kappa of a vs b (per item, nan = missing) for each weight row."""
    vals = np.asarray(values, float)
    q = len(vals)
    ok = ~(np.isnan(a) | np.isnan(b))
    ia = np.searchsorted(vals, a[ok])
    ib = np.searchsorted(vals, b[ok])
    onehot = np.zeros((ok.sum(), q * q))
    onehot[np.arange(ok.sum()), ia * q + ib] = 1.0
    obs = (w[:, ok] @ onehot).reshape(-1, q, q)
    tot = obs.sum(axis=(1, 2), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = obs / tot
        exp = p.sum(axis=2)[:, :, None] * p.sum(axis=1)[:, None, :]
        v = 1.0 - agreement_weights(q, kind)  # type: ignore[arg-type]
        de = (v * exp).sum(axis=(1, 2))
        return np.where(de > 0, 1.0 - (v * p).sum(axis=(1, 2)) / de, np.nan)


def weighted_alpha(w: np.ndarray, matrix: np.ndarray, level: Level,
                   values: Sequence[float]) -> np.ndarray:
    """Krippendorff's alpha of an items × raters matrix for each weight row."""
    vals = np.union1d(np.asarray(values, float), np.unique(matrix[~np.isnan(matrix)]))
    parts = _parts_from_counts(counts_matrix(matrix, vals))
    v = len(vals)
    o = (w @ parts).reshape(-1, v, v)
    return _alpha_from_o(o, level, vals)


def weighted_mean(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w[:, ok] @ x[ok]) / w[:, ok].sum(axis=1)


def percentile_ci(boots: np.ndarray, ci: float = 0.95) -> tuple[float | None, float | None]:
    b = boots[np.isfinite(boots)]
    if b.size < 2:
        return None, None
    lo, hi = np.quantile(b, [(1 - ci) / 2, 1 - (1 - ci) / 2])
    return float(lo), float(hi)


def two_sided_p(boots: np.ndarray) -> float | None:
    """Bootstrap p-value of 'difference = 0': twice the smaller tail, counted with the usual
    +1 correction ``(k + 1) / (B + 1)`` so it is never exactly 0 (at most 1)."""
    b = boots[np.isfinite(boots)]
    if b.size == 0:
        return None
    if np.all(b == 0):
        return 1.0
    k = min(np.sum(b <= 0), np.sum(b >= 0))
    return float(min(1.0, 2 * (k + 1) / (b.size + 1)))

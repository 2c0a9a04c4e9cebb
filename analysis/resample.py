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
from .layout import counts_matrix

__all__ = ["item_weights", "item_bootstrap_sums", "weighted_alpha", "percentile_ci",
           "two_sided_p"]


_CHUNK = 200  # resamples drawn at a time, so B × items weights never sit in memory at once


def _weight_chunks(n_items: int, B: int, seed: int):
    """Draw counts of each item per resample: n draws with replacement, counted per row (a
    bincount of the drawn indices, much faster than a multinomial over n categories)."""
    rng = np.random.default_rng(seed)
    for start in range(0, B, _CHUNK):
        rows = min(_CHUNK, B - start)
        idx = rng.integers(0, n_items, size=(rows, n_items))
        idx += (np.arange(rows) * n_items)[:, None]
        yield np.bincount(idx.ravel(), minlength=rows * n_items).reshape(rows, n_items
                                                                          ).astype(float)


def item_weights(n_items: int, B: int, seed: int) -> np.ndarray:
    """(B, n) draw counts of a seeded item bootstrap (each row sums to n)."""
    if B < 1:
        return np.zeros((0, n_items))
    return np.vstack(list(_weight_chunks(n_items, B, seed)))


def item_bootstrap_sums(per_item: np.ndarray, B: int, seed: int) -> np.ndarray:
    """Per-item sums (items × m) summed over each of B item resamples: (B, m).

    The same resamples as :func:`item_weights` with the same seed, drawn in chunks so that
    studies with many items do not need a B × items matrix.
    """
    return np.vstack([w @ per_item for w in _weight_chunks(per_item.shape[0], B, seed)])


def weighted_alpha(w: np.ndarray, matrix: np.ndarray, level: Level,
                   values: Sequence[float]) -> np.ndarray:
    """Krippendorff's alpha of an items × raters matrix for each weight row."""
    vals = np.union1d(np.asarray(values, float), np.unique(matrix[~np.isnan(matrix)]))
    parts = _parts_from_counts(counts_matrix(matrix, vals))
    v = len(vals)
    o = (w @ parts).reshape(-1, v, v)
    return _alpha_from_o(o, level, vals)


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

"""Pearson, Spearman and Kendall's tau-b of pooled pairs, exactly, for every item resample.

The pairs ``(x_p, y_p)`` are the pooled leave-one-out pairs of :mod:`analysis.ceiling` (a
human's or a judge's or a metric's score, and the mean of the other humans on the item); a
bootstrap resample draws *items*, so pair ``p`` of item ``i`` appears ``v_i`` times, where
``v`` is a row of :func:`analysis.resample.item_weights`. The three coefficients of a resample
are computed from those counts without building it:

* **Pearson**: weighted moments, ``r = sum w (x - mx)(y - my) / sqrt(sum w (x - mx)^2 ·
  sum w (y - my)^2)`` with ``w_p = v_i``.
* **Spearman**: Pearson of the resample's mid-ranks. Values tied in the resample (copies of
  one pair, or equal values) share the mean of their ranks: a group of equal values with total
  weight ``G_k`` after ``C_k`` smaller ones has rank ``C_k + (G_k + 1) / 2``.
* **Kendall's tau-b** (Kendall 1945): ``(n_c - n_d) / sqrt((n_0 - n_1)(n_0 - n_2))`` with
  ``n_0 = N(N-1)/2``, ``N = sum w``, and ``n_1 = (sum_k G_k^2 - N) / 2`` the pairs tied in
  ``x`` (``n_2`` in ``y``), copies of one pair included. The numerator is a quadratic form
  ``1/2 v' A v`` in the item counts, with ``A_ij = sum over pairs p of item i and q of item j
  of sign(x_p - x_q) sign(y_p - y_q)`` built once.

For weights of ones these are exactly scipy's ``pearsonr``, ``spearmanr`` and
``kendalltau(variant="b")``, and for any weights exactly those of the resample written out
(the tests check both).

Reference: Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika,
33(3), 239-251.
"""

from __future__ import annotations

import numpy as np

__all__ = ["STATS", "PairDesign", "weighted_correlations"]

STATS = ("pearson", "spearman", "kendall_tau_b")
_CHUNK = 200  # resamples at a time, so (resamples × pairs) arrays stay small
_BLOCK = 1024  # pairs per block when building the Kendall matrix


class PairDesign:
    """The pairs of one comparison: their items (``item[p]`` in ``0..n_items-1``) and the
    shared second variable ``y`` (the leave-one-out consensus)."""

    def __init__(self, item: np.ndarray, y: np.ndarray, n_items: int):
        order = np.argsort(item, kind="stable")
        self.order = order
        self.item = np.asarray(item)[order]
        self.y = np.asarray(y, float)[order]
        self.n_items = n_items
        self.starts = np.flatnonzero(np.r_[True, self.item[1:] != self.item[:-1]])
        self.items_present = self.item[self.starts]
        self._y_groups = _groups(self.y)

    def align(self, x: np.ndarray) -> np.ndarray:
        """``x`` given in the caller's pair order, in this design's order."""
        return np.asarray(x, float)[self.order]

    def kendall_matrix(self, x: np.ndarray) -> np.ndarray:
        """``A`` (items × items) of the module docstring for ``x`` in this design's order."""
        n_pres = self.items_present.size
        out = np.zeros((self.n_items, self.n_items))
        acc = np.zeros((n_pres, n_pres))
        starts = self.starts
        bounds = list(starts) + [self.item.size]
        i = 0
        while i < n_pres:  # whole items per block, about _BLOCK pairs each
            j = i + 1
            while j < n_pres and bounds[j + 1] - bounds[i] <= _BLOCK:
                j += 1
            lo, hi = bounds[i], bounds[j]
            a = (np.sign(x[lo:hi, None] - x[None, :])
                 * np.sign(self.y[lo:hi, None] - self.y[None, :]))
            cols = np.add.reduceat(a, starts, axis=1)
            acc[i:j] = np.add.reduceat(cols, starts[i:j] - lo, axis=0)
            i = j
        out[np.ix_(self.items_present, self.items_present)] = acc
        return out


def _groups(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort order, group starts of equal values in that order, and each value's group."""
    order = np.argsort(v, kind="stable")
    sv = v[order]
    starts = np.flatnonzero(np.r_[True, sv[1:] != sv[:-1]])
    group = np.empty(v.size, int)
    group[order] = np.cumsum(np.r_[True, sv[1:] != sv[:-1]]) - 1
    return order, starts, group


def _midranks(wp: np.ndarray, groups) -> tuple[np.ndarray, np.ndarray]:
    """Per resample row: each group's mid-rank and weight G (rows × groups)."""
    order, starts, _ = groups
    g = np.add.reduceat(wp[:, order], starts, axis=1)
    return np.cumsum(g, axis=1) - g + (g + 1.0) / 2.0, g


def _pearson_from_sums(n, sa, sb, saa, sbb, sab) -> np.ndarray:
    """r from weighted sums: n, sum a, sum b, sum a^2, sum b^2, sum ab (arrays per row)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sab - sa * sb / n
        va, vb = saa - sa * sa / n, sbb - sb * sb / n
        ok = (va > 1e-12 * np.abs(saa)) & (vb > 1e-12 * np.abs(sbb))
        return np.where(ok, cov / np.sqrt(np.where(ok, va * vb, 1.0)), np.nan)


def weighted_correlations(design: PairDesign, x: np.ndarray, weights: np.ndarray
                          ) -> dict[str, np.ndarray]:
    """Pearson, Spearman and Kendall's tau-b of ``(x, design.y)`` for each row of item
    ``weights`` (resamples × items); ``x`` in the design's order (:meth:`PairDesign.align`).
    Undefined values (no variance in the resample) are nan."""
    weights = np.atleast_2d(np.asarray(weights, float))
    x = np.asarray(x, float)
    y = design.y
    xg = _groups(x)
    a_mat = design.kendall_matrix(x)
    out = {k: np.empty(weights.shape[0]) for k in STATS}
    for lo in range(0, weights.shape[0], _CHUNK):
        w_items = weights[lo:lo + _CHUNK]
        wp = w_items[:, design.item]
        n = wp.sum(axis=1)
        out["pearson"][lo:lo + _CHUNK] = _pearson_from_sums(
            n, wp @ x, wp @ y, wp @ (x * x), wp @ (y * y), wp @ (x * y))
        rx, gx = _midranks(wp, xg)
        ry, gy = _midranks(wp, design._y_groups)
        out["spearman"][lo:lo + _CHUNK] = _pearson_from_sums(
            n, (gx * rx).sum(axis=1), (gy * ry).sum(axis=1), (gx * rx * rx).sum(axis=1),
            (gy * ry * ry).sum(axis=1),
            (wp * rx[:, xg[2]] * ry[:, design._y_groups[2]]).sum(axis=1))
        n0 = n * (n - 1) / 2
        n1 = ((gx ** 2).sum(axis=1) - n) / 2
        n2 = ((gy ** 2).sum(axis=1) - n) / 2
        s = 0.5 * ((w_items @ a_mat) * w_items).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            den = np.sqrt((n0 - n1) * (n0 - n2))
            out["kendall_tau_b"][lo:lo + _CHUNK] = np.where(den > 0, s / den, np.nan)
    return out

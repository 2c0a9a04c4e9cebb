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
  ``x`` (``n_2`` in ``y``), copies of one pair included. The numerator counts, for every pair
  ``p``, the weight of the pairs with a smaller ``x`` and a smaller ``y`` minus those with a
  smaller ``x`` and a larger ``y``, times ``w_p`` (each untied couple once, from its larger
  ``x``; ties add nothing): with the weights tabulated by (``x`` value, ``y`` value), that is
  two cumulative sums over the table, for all resamples at once.

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
_CELLS = 4_000_000  # at most this many (resample, x group, y group) cells at a time


class PairDesign:
    """The pairs of one comparison: their items (``item[p]`` in ``0..n_items-1``) and the
    shared second variable ``y`` (the leave-one-out consensus)."""

    def __init__(self, item: np.ndarray, y: np.ndarray, n_items: int):
        order = np.argsort(item, kind="stable")
        self.order = order
        self.item = np.asarray(item)[order]
        self.y = np.asarray(y, float)[order]
        self.n_items = n_items

    def align(self, x: np.ndarray) -> np.ndarray:
        """``x`` given in the caller's pair order, in this design's order."""
        return np.asarray(x, float)[self.order]


def _pearson_from_sums(n, sa, sb, saa, sbb, sab) -> np.ndarray:
    """r from weighted sums: n, sum a, sum b, sum a^2, sum b^2, sum ab (arrays per row)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sab - sa * sb / n
        va, vb = saa - sa * sa / n, sbb - sb * sb / n
        ok = (va > 1e-12 * np.abs(saa)) & (vb > 1e-12 * np.abs(sbb))
        return np.where(ok, cov / np.sqrt(np.where(ok, va * vb, 1.0)), np.nan)


def _midranks(g: np.ndarray) -> np.ndarray:
    """Mid-ranks of value groups (in increasing order) with weights ``g`` (rows × groups)."""
    return np.cumsum(g, axis=-1) - g + (g + 1.0) / 2.0


def weighted_correlations(design: PairDesign, x: np.ndarray, weights: np.ndarray
                          ) -> dict[str, np.ndarray]:
    """Pearson, Spearman and Kendall's tau-b of ``(x, design.y)`` for each row of item
    ``weights`` (resamples × items); ``x`` in the design's order (:meth:`PairDesign.align`).
    Undefined values (no variance in the resample) are nan.

    Each resample's pair weights are tabulated by (value of the variable with fewer distinct
    values ``u``, value of the other ``v``); all three coefficients follow from that table.
    """
    weights = np.atleast_2d(np.asarray(weights, float))
    x = np.asarray(x, float)
    xv, gx = np.unique(x, return_inverse=True)
    yv, gy = np.unique(design.y, return_inverse=True)
    swap = xv.size > yv.size  # u = the variable with fewer values, first axis of the table
    uv, gu, vv, gv = (yv, gy, xv, gx) if swap else (xv, gx, yv, gy)
    ku, kv = uv.size, vv.size
    cell = gu * kv + gv
    order = np.argsort(cell, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(cell[order]) != 0])
    present = cell[order][starts]
    item_of = design.item[order]
    out = {k: np.empty(weights.shape[0]) for k in STATS}
    step = max(1, min(_CHUNK, _CELLS // (ku * kv)))
    for lo in range(0, weights.shape[0], step):
        sl = slice(lo, lo + step)
        w = weights[sl]
        t = np.zeros((w.shape[0], ku * kv))
        t[:, present] = np.add.reduceat(w[:, item_of], starts, axis=1)
        t = t.reshape(w.shape[0], ku, kv)
        gu_w, gv_w = t.sum(axis=2), t.sum(axis=1)  # weight of each value of u, of v
        n = gu_w.sum(axis=1)
        tv = t @ vv  # (rows, ku): sum over v of weight x value
        ru, rv = _midranks(gu_w), _midranks(gv_w)
        out["pearson"][sl] = _pearson_from_sums(
            n, gu_w @ uv, gv_w @ vv, gu_w @ (uv * uv), gv_w @ (vv * vv),
            (tv * uv).sum(axis=1))
        out["spearman"][sl] = _pearson_from_sums(
            n, (gu_w * ru).sum(axis=1), (gv_w * rv).sum(axis=1),
            (gu_w * ru * ru).sum(axis=1), (gv_w * rv * rv).sum(axis=1),
            (np.einsum("buv,bv->bu", t, rv) * ru).sum(axis=1))
        below = np.cumsum(t, axis=2)
        below -= t  # weight with a smaller v, same u
        lower = np.cumsum(below, axis=1)
        lower -= below  # ... and a smaller u; with a larger u: column total - lower - below,
        # so lower - upper = 2 lower + below - column total (in place: these are large)
        lower *= 2
        lower += below
        lower -= below.sum(axis=1, keepdims=True)
        s = np.einsum("buv,buv->b", t, lower)
        n0 = n * (n - 1) / 2
        n1 = ((gu_w ** 2).sum(axis=1) - n) / 2
        n2 = ((gv_w ** 2).sum(axis=1) - n) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            den = np.sqrt((n0 - n1) * (n0 - n2))
            out["kendall_tau_b"][sl] = np.where(den > 0, s / den, np.nan)
    return out

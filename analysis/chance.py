"""Chance-corrected agreement for many raters and for rater pairs, on the full declared scale.

Multi-rater coefficients follow Gwet's unified formulation (Gwet 2014, *Handbook of
Inter-Rater Reliability*, 4th ed., ch. 2-4), with ``r_ik`` raters putting unit ``i`` in
category ``k``, ``r_i = sum_k r_ik`` and agreement weights ``w_kl``:

* percent agreement ``p_a = mean over units with r_i >= 2 of
  sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` with ``r*_ik = sum_l w_kl r_il``;
* ``pi_k = mean over units with r_i >= 1 of r_ik / r_i``;
* Fleiss' kappa: ``p_e = sum_kl w_kl pi_k pi_l``;
* Gwet's AC1 / AC2: ``p_e = T_w / (q (q - 1)) sum_k pi_k (1 - pi_k)``, ``T_w = sum_kl w_kl``;
* Brennan–Prediger: ``p_e = T_w / q^2``;
* coefficient ``= (p_a - p_e) / (1 - p_e)``.

Weights are positional on the declared scale of ``q`` categories: identity (unweighted),
linear ``1 - |k - l| / (q - 1)``, quadratic ``1 - (k - l)^2 / (q - 1)^2``. Passing the full
scale matters: an unused category still counts in ``q``. With ``values`` (``on="value"``) the
distances are those of the score values instead, ``|v_k - v_l| / (v_max - v_min)``: the same
on an evenly spaced scale, and the right distances on an uneven one (e.g. 1, 1.5, 3).

Cohen's kappa for two raters: ``kappa_w = 1 - sum v_kl o_kl / sum v_kl e_kl`` with
disagreement weights ``v = 1 - w``, observed proportions ``o`` and expected ``e`` from the
marginals (Cohen 1968).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal, NamedTuple

import numpy as np

from .layout import Ratings, counts_matrix

__all__ = ["Weights", "Distance", "agreement_weights", "multi_rater", "MultiRater",
           "cohen_kappa", "pairwise_cohen", "PairwiseKappa", "percent_agreement"]

Weights = Literal["unweighted", "linear", "quadratic"]
Distance = Literal["position", "value"]


def agreement_weights(q: int, kind: Weights,
                      values: Sequence[float] | None = None) -> np.ndarray:
    """Agreement weights ``w_kl`` (1 on the diagonal) over ``q`` ordered categories, by
    position, or by the distance of the score ``values`` when they are given."""
    if q < 2:
        return np.ones((q, q))
    if values is not None:
        v = np.asarray(values, dtype=float)
        d = np.abs(v[:, None] - v[None, :]) / (v.max() - v.min())
    else:
        i = np.arange(q)
        d = np.abs(i[:, None] - i[None, :]) / (q - 1)
    if kind == "unweighted":
        return np.eye(q)
    if kind == "linear":
        return 1.0 - d
    if kind == "quadratic":
        return 1.0 - d ** 2
    raise ValueError(f"weights must be unweighted, linear or quadratic; got {kind!r}")


@dataclass(frozen=True)
class MultiRater:
    percent_agreement: float
    fleiss_kappa: float
    gwet: float
    brennan_prediger: float


def _coef(pa: float, pe: float) -> float:
    return float("nan") if pe >= 1 else (pa - pe) / (1 - pe)


def multi_rater(counts: np.ndarray, kind: Weights = "unweighted",
                values: Sequence[float] | None = None) -> MultiRater:
    """Fleiss' kappa, Gwet's AC1/AC2 and Brennan–Prediger from unit × category counts.

    Examples
    --------
    Gwet (2014) data ``cac.raw4raters`` (12 units, 4 raters, scale 1-5), as counts:

    >>> raw = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
    ...        [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5],
    ...        [None, None, 1, 1], [None, None, 3, None]]
    >>> m = np.array([[np.nan if v is None else v for v in row] for row in raw], float)
    >>> res = multi_rater(counts_matrix(m, [1, 2, 3, 4, 5]))
    >>> round(res.gwet, 4), round(res.fleiss_kappa, 4), round(res.brennan_prediger, 4)
    (0.7754, 0.7612, 0.7727)
    """
    q = counts.shape[1]
    w = agreement_weights(q, kind, values)
    r_i = counts.sum(axis=1)
    rated = r_i >= 1
    pairable = r_i >= 2
    if pairable.sum() == 0 or q < 2:
        nan = float("nan")
        return MultiRater(nan, nan, nan, nan)
    c2 = counts[pairable]
    r2 = r_i[pairable]
    star = c2 @ w.T
    pa = float(np.mean(np.sum(c2 * (star - 1), axis=1) / (r2 * (r2 - 1))))
    pi = np.mean(counts[rated] / r_i[rated][:, None], axis=0)
    t_w = w.sum()
    pe_fleiss = float(pi @ w @ pi)
    pe_gwet = float(t_w / (q * (q - 1)) * np.sum(pi * (1 - pi)))
    pe_bp = float(t_w / q ** 2)
    return MultiRater(pa, _coef(pa, pe_fleiss), _coef(pa, pe_gwet), _coef(pa, pe_bp))


def cohen_kappa(a: np.ndarray, b: np.ndarray, values: Sequence[float],
                kind: Weights = "unweighted", on: Distance = "position") -> float:
    """Cohen's (weighted) kappa of two raters' scores on the same items, full scale given;
    weights by category position (as R ``irr::kappa2``) or, ``on="value"``, by value distance.

    Examples
    --------
    Gwet (2014) ``cont3x3abstractors`` (100 items, 3 categories): unweighted 0.7964,
    quadratic 0.8922.

    >>> t = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    >>> a = np.repeat([0, 0, 0, 1, 1, 1, 2, 2, 2], t.ravel())
    >>> b = np.repeat([0, 1, 2] * 3, t.ravel())
    >>> round(cohen_kappa(a, b, [0, 1, 2]), 4), round(cohen_kappa(a, b, [0, 1, 2], "quadratic"), 4)
    (0.7964, 0.8922)
    """
    vals = np.asarray(values, dtype=float)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    if a.size == 0:
        return float("nan")
    ia = np.searchsorted(vals, a)
    ib = np.searchsorted(vals, b)
    if np.any(ia >= len(vals)) or np.any(vals[np.minimum(ia, len(vals) - 1)] != a) or \
            np.any(ib >= len(vals)) or np.any(vals[np.minimum(ib, len(vals) - 1)] != b):
        raise ValueError(f"a score is not on the scale {list(vals)}")
    q = len(vals)
    obs = np.zeros((q, q))
    np.add.at(obs, (ia, ib), 1.0)
    obs /= obs.sum()
    exp = np.outer(obs.sum(axis=1), obs.sum(axis=0))
    v = 1.0 - agreement_weights(q, kind, vals if on == "value" else None)
    de = float(np.sum(v * exp))
    if de <= 0:
        return float("nan")
    return 1.0 - float(np.sum(v * obs)) / de


class PairwiseKappa(NamedTuple):
    """Cohen's kappa over rater pairs, weighted by the items each pair shares."""

    value: float
    pairs_used: int
    pairs_too_few: int
    pairs_undefined: int
    min_items: int
    items: int


def pairwise_cohen(r: Ratings, values: Sequence[float], kind: Weights, min_common: int = 2,
                   on: Distance = "position") -> PairwiseKappa:
    """Mean Cohen's kappa over rater pairs, **weighted by the items each pair shares**.

    A pair sharing fewer than ``min_common`` items does not count (``pairs_too_few``; pairs
    sharing no item are not pairs at all), nor does a pair whose kappa is undefined (no
    variance in either rater's scores: ``pairs_undefined``). With two raters the value is
    their kappa. Weighting by shared items keeps a pair that shares 2 items from counting as
    much as one that shares 140.
    """
    num = den = 0.0
    used = few = undefined = 0
    for i, j in combinations(range(r.n_raters), 2):
        a, b = r.matrix[:, i], r.matrix[:, j]
        both = ~(np.isnan(a) | np.isnan(b))
        shared = int(both.sum())
        if shared == 0:
            continue
        if shared < min_common:
            few += 1
            continue
        k = cohen_kappa(a[both], b[both], values, kind, on)
        if np.isnan(k):
            undefined += 1
            continue
        used += 1
        num += shared * k
        den += shared
    return PairwiseKappa(num / den if den else float("nan"), used, few, undefined,
                         min_common, int(den))


def percent_agreement(r: Ratings, values: Sequence[float]) -> tuple[float, float]:
    """Share of within-item rating pairs that agree exactly, and within one scale unit
    (``|a - b| <= 1`` in score values, not positions)."""
    counts = counts_matrix(r.matrix, values)
    v = np.asarray(values, dtype=float)
    w1 = (np.abs(v[:, None] - v[None, :]) <= 1.0 + 1e-9).astype(float)
    m = counts.sum(axis=1)
    ok = m >= 2
    if not ok.any():
        return float("nan"), float("nan")
    c = counts[ok]
    # percent agreement with identity weights, written out: defined on a one-value scale too
    exact = float(np.mean(np.sum(c * (c - 1), axis=1) / (m[ok] * (m[ok] - 1))))
    within = float(np.mean(np.sum(c * (c @ w1.T - 1), axis=1) / (m[ok] * (m[ok] - 1))))
    return exact, within

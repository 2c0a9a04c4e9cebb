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
scale matters: an unused category still counts in ``q``.

Cohen's kappa for two raters: ``kappa_w = 1 - sum v_kl o_kl / sum v_kl e_kl`` with
disagreement weights ``v = 1 - w``, observed proportions ``o`` and expected ``e`` from the
marginals (Cohen 1968).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np

from .layout import Ratings, counts_matrix

__all__ = ["Weights", "agreement_weights", "multi_rater", "MultiRater", "cohen_kappa",
           "pairwise_cohen", "percent_agreement"]

Weights = Literal["unweighted", "linear", "quadratic"]


def agreement_weights(q: int, kind: Weights) -> np.ndarray:
    """Agreement weights ``w_kl`` (1 on the diagonal) over ``q`` ordered categories."""
    if q < 2:
        return np.ones((q, q))
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


def multi_rater(counts: np.ndarray, kind: Weights = "unweighted") -> MultiRater:
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
    w = agreement_weights(q, kind)
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
                kind: Weights = "unweighted") -> float:
    """Cohen's (weighted) kappa of two raters' scores on the same items, full scale given.

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
    v = 1.0 - agreement_weights(q, kind)
    de = float(np.sum(v * exp))
    if de <= 0:
        return float("nan")
    return 1.0 - float(np.sum(v * obs)) / de


def pairwise_cohen(r: Ratings, values: Sequence[float], kind: Weights,
                   min_common: int = 2) -> tuple[float, int]:
    """Mean Cohen's kappa over rater pairs with at least ``min_common`` common items.

    Returns (mean, number of pairs used); with exactly two raters the mean is their kappa.
    """
    vals: list[float] = []
    for i, j in combinations(range(r.n_raters), 2):
        a, b = r.matrix[:, i], r.matrix[:, j]
        both = ~(np.isnan(a) | np.isnan(b))
        if both.sum() < min_common:
            continue
        k = cohen_kappa(a[both], b[both], values, kind)
        if not np.isnan(k):
            vals.append(k)
    return (float(np.mean(vals)) if vals else float("nan")), len(vals)


def percent_agreement(r: Ratings, values: Sequence[float]) -> tuple[float, float]:
    """Share of within-item rating pairs that agree exactly, and within one scale step."""
    counts = counts_matrix(r.matrix, values)
    q = counts.shape[1]
    exact = multi_rater(counts, "unweighted").percent_agreement
    i = np.arange(q)
    w1 = (np.abs(i[:, None] - i[None, :]) <= 1).astype(float)
    m = counts.sum(axis=1)
    ok = m >= 2
    if not ok.any():
        return float("nan"), float("nan")
    c = counts[ok]
    within = float(np.mean(np.sum(c * (c @ w1.T - 1), axis=1) / (m[ok] * (m[ok] - 1))))
    return exact, within

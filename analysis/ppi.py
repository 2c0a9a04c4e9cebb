"""Prediction-powered inference for a mean: a judge's scores on every item, made valid by the
humans' scores on a subset (PPI, PPI++ and active inference).

A judge scores all N + n items of a model; humans score n of them. Averaging the judge alone
gives a narrow CI around a biased number; averaging the humans alone gives a valid but wide
one. PPI corrects the judge's mean by the judge's average error on the human-rated items, and
PPI++ weighs the judge by a power-tuning factor lambda so the CI is never wider than the
humans' alone (asymptotically) and narrower whenever the judge correlates with the humans.
Whatever the judge's bias, the interval stays valid.

Conventions (those of the reference implementation ``ppi-python``, so the numbers agree to
machine precision): the labelled set (human value Y and judge value Yhat) and the unlabelled
set (judge only) are disjoint; variances in the standard error divide by the sample size
(ddof = 0); lambda's covariance divides by n, its variance of Yhat is the unbiased one (ddof =
1) over both sets together; lambda is clipped to [0, 1]; the interval is the normal (CLT) one.

Active inference (Zrnic & Candès 2024) picks which items the humans rate with known
probabilities pi_i and reweights by 1/pi_i (:func:`active_mean`); :func:`allocate_budget`,
:func:`inclusion_probabilities` and :func:`systematic_sample` make such a draw, and
:func:`labelled_for_halfwidth` says how many human-rated items a target half-width needs.

This module is pure: numpy and scipy in, frozen dataclasses out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy.stats import norm

__all__ = ["Estimator", "ESTIMATORS", "MeanEstimate", "tuned_lambda", "ppi_mean",
           "classical_mean", "active_mean", "active_lambda", "allocate_budget",
           "inclusion_probabilities", "systematic_sample", "labelling_probability",
           "labelled_for_halfwidth"]

Estimator = Literal["ppi++", "ppi", "human", "judge"]
ESTIMATORS: tuple[str, ...] = ("ppi++", "ppi", "human", "judge")


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its standard error and normal CI.

    ``n`` human-rated items used, ``N`` judge-only items used (0 for a humans-only or
    judge-only mean), ``lam`` the lambda used (None where it does not apply), ``method`` the
    estimator that produced it, ``constant_judge`` True when lambda is 0 because the judge gave
    every item the same score (the estimate is then the humans' own).
    """

    estimate: float
    se: float
    low: float
    high: float
    n: int
    N: int
    lam: float | None
    method: str
    level: float = 0.95
    constant_judge: bool = False

    @property
    def width(self) -> float:
        return self.high - self.low


@lru_cache(maxsize=16)
def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95); got {level}")
    return float(norm.ppf(0.5 + level / 2))


def _vec(x, name: str, min_n: int = 1) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    if a.size < min_n:
        raise ValueError(f"{name}: needs at least {min_n} values, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: every value must be a finite number (leave unscored items "
                         "out before calling)")
    return a


def _interval(est: float, se: float, level: float) -> tuple[float, float]:
    h = _z(level) * se
    return est - h, est + h


def tuned_lambda(y: Sequence[float], yhat: Sequence[float],
                 yhat_unlabelled: Sequence[float]) -> float:
    """PPI++'s power-tuning factor for a mean, clipped to [0, 1].

    Parameters
    ----------
    y, yhat : array-like, length n
        Human and judge values of the human-rated items (paired).
    yhat_unlabelled : array-like, length N
        Judge values of the items no human rated.

    Returns
    -------
    float
        lambda = Cov(Y, Yhat) / ((1 + n/N) Var(Yhat)), where Cov divides by n and Var is the
        unbiased variance of the judge's values over both sets; 0 for a constant judge.

    Notes
    -----
    Minimises the asymptotic variance lambda^2 Var(Yhat)/N + Var(Y - lambda Yhat)/n of
    :func:`ppi_mean` over lambda (PPI++, Angelopoulos, Duchi & Zrnic 2023, Example 6.1).
    lambda = 1 is plain PPI, lambda = 0 the humans alone.

    Examples
    --------
    >>> round(tuned_lambda([1, 2, 3], [1, 2, 3], [2, 2]), 4)
    0.5333
    """
    y, yh = _vec(y, "y", 2), _vec(yhat, "yhat", 2)
    yu = _vec(yhat_unlabelled, "yhat_unlabelled")
    if y.size != yh.size:
        raise ValueError(f"y and yhat must be paired: {y.size} and {yh.size} values")
    n, N = y.size, yu.size
    var = float(np.var(np.concatenate([yh, yu]), ddof=1))
    if var == 0.0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yh - yh.mean())))
    return float(np.clip(cov / ((1 + n / N) * var), 0.0, 1.0))


def ppi_mean(y: Sequence[float], yhat: Sequence[float], yhat_unlabelled: Sequence[float], *,
             lam: float | None = None, level: float = 0.95) -> MeanEstimate:
    """Prediction-powered mean and CI (PPI++ by default; ``lam=1`` plain PPI).

    Parameters
    ----------
    y, yhat : array-like, length n >= 2
        Human and judge values of the human-rated items.
    yhat_unlabelled : array-like, length N >= 1
        Judge values of the items no human rated.
    lam : float or None
        None tunes lambda (:func:`tuned_lambda`); 1 gives PPI; 0 the humans alone.
    level : float
        Confidence level (0.95 gives 95% intervals; ``ppi_py.ppi_mean_ci``'s ``alpha=0.1``
        default is 90%).

    Returns
    -------
    MeanEstimate
        theta = lambda * mean(Yhat_unlabelled) + mean(Y - lambda * Yhat), with
        se^2 = lambda^2 Var(Yhat_unlabelled) / N + Var(Y - lambda * Yhat) / n (ddof = 0) and
        the normal interval theta +- z se.

    Notes
    -----
    The interval is valid whatever the judge's bias, provided the human-rated items are a
    uniform random subset of the model's items. Its width is about sqrt(1 - rho^2) that of
    the humans alone when N >> n (rho: the judge–human correlation).

    References
    ----------
    Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023). Prediction-powered inference.
    Science 382, 669–674. Angelopoulos, Duchi & Zrnic (2023). PPI++: Efficient
    prediction-powered inference. arXiv:2311.01453.

    Examples
    --------
    >>> r = ppi_mean([1, 2, 3], [2, 2, 4], [3, 5], lam=1)
    >>> round(r.estimate, 4), round(r.se, 4)
    (3.3333, 0.7577)
    """
    y, yh = _vec(y, "y", 2), _vec(yhat, "yhat", 2)
    yu = _vec(yhat_unlabelled, "yhat_unlabelled")
    if y.size != yh.size:
        raise ValueError(f"y and yhat must be paired: {y.size} and {yh.size} values")
    constant = False
    if lam is None:
        lam = tuned_lambda(y, yh, yu)
        constant = float(np.var(np.concatenate([yh, yu]))) == 0.0
        method = "ppi++"
    else:
        lam = float(lam)
        method = "ppi" if lam == 1 else "human" if lam == 0 else f"ppi (lambda = {lam:g})"
    rect = y - lam * yh
    est = float(lam * yu.mean() + rect.mean())
    se = math.sqrt(float(np.var(lam * yu)) / yu.size + float(np.var(rect)) / y.size)
    lo, hi = _interval(est, se, level)
    return MeanEstimate(est, se, lo, hi, int(y.size),
                        int(yu.size), lam, method, level, constant)


def classical_mean(values: Sequence[float], *, level: float = 0.95,
                   method: str = "human") -> MeanEstimate:
    """The plain mean with the same normal interval (sd with ddof = 0, as :func:`ppi_mean`
    at lambda = 0), for the humans-only and the judge-only columns.

    >>> r = classical_mean([1, 2, 3])
    >>> r.estimate, round(r.se, 4)
    (2.0, 0.4714)
    """
    x = _vec(values, "values", 2)
    est = float(x.mean())
    se = float(np.std(x)) / math.sqrt(x.size)
    lo, hi = _interval(est, se, level)
    return MeanEstimate(est, se, lo, hi, int(x.size), 0, None, method, level)


def active_lambda(yhat: np.ndarray, y: np.ndarray, labelled: np.ndarray, prob: np.ndarray,
                  strata: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per stratum, the lambda in [0, 1] and the offset a that minimise the sample variance of
    the summands of :func:`active_mean`.

    Z = A + sum_s (lambda_s B_s + a_s C_s) with A = Y xi/pi, B_s = Yhat (1 - xi/pi) and
    C_s = 1 - xi/pi on the items of stratum s (0 elsewhere): least squares on the centred
    columns, lambda clipped to [0, 1], then the offsets refitted. A stratum whose judge values
    do not vary gets lambda 0.
    """
    st = np.zeros(yhat.size, dtype=int) if strata is None else np.asarray(strata)
    keys = np.unique(st)
    w = np.where(labelled, 1.0 / prob, 0.0)
    a_ = np.where(labelled, np.nan_to_num(y) * w, 0.0)
    B = np.stack([np.where(st == k, yhat * (1.0 - w), 0.0) for k in keys], axis=1)
    C = np.stack([np.where(st == k, 1.0 - w, 0.0) for k in keys], axis=1)
    varies = np.array([float(np.var(yhat[st == k])) > 0 for k in keys])
    Bc, Cc, Ac = B - B.mean(0), C - C.mean(0), a_ - a_.mean()
    lam = np.zeros(keys.size)
    if varies.any():
        X = np.concatenate([Bc[:, varies], Cc], axis=1)
        coef = np.linalg.lstsq(X, -Ac, rcond=None)[0]
        lam[varies] = np.clip(coef[:varies.sum()], 0.0, 1.0)
    off = np.linalg.lstsq(Cc, -(Ac + Bc @ lam), rcond=None)[0]
    return lam, off


def active_mean(yhat: Sequence[float], y: Sequence[float], labelled: Sequence[bool],
                prob: Sequence[float], *, strata: Sequence[int] | None = None,
                lam: float | None = None, level: float = 0.95) -> MeanEstimate:
    """Active-inference mean: every item weighted by the inverse of its probability of having
    been human-rated.

    Parameters
    ----------
    yhat : array-like, length M
        The judge's value of every item of the model.
    y : array-like, length M
        The human value where ``labelled`` (any value, e.g. nan, elsewhere).
    labelled : array-like of bool, length M
        Whether a human rated the item.
    prob : array-like, length M
        The probability pi_i, fixed before the draw, that the item would be human-rated;
        every pi_i must be in (0, 1].
    strata : array-like of int, length M, optional
        Groups known before the draw (e.g. whether the judge's samples agreed); each gets its
        own lambda and offset.
    lam : float or None
        None tunes lambda and the offset a per stratum (:func:`active_lambda`); a given lambda
        is used everywhere with a = 0; 0 gives the humans alone (Horvitz–Thompson).

    Returns
    -------
    MeanEstimate
        theta = mean_i Z_i with Z_i = g_i + (Y_i - g_i) xi_i / pi_i, g_i = a_s + lambda_s
        Yhat_i for item i in stratum s, and se = sd(Z) / sqrt(M). ``lam`` is the
        item-weighted mean lambda over the strata.

    Notes
    -----
    E[xi_i / pi_i | item] = 1 makes theta unbiased for any g and any pi that depends on the
    item only through what was known before the draw (here: the judge's scores and whether
    its samples agreed). The offsets centre the residuals Y - g, which is what makes sampling
    by the judge's uncertainty pay off when the judge is biased; with pi_i = n/M for every
    item, exactly n rated and one stratum, the offset cancels and theta is PPI with the
    judge's mean over all M items: lambda mean(Yhat) + mean over the rated items of
    (Y - lambda Yhat).

    References
    ----------
    Zrnic & Candès (2024). Active statistical inference. ICML 2024, PMLR 235.

    Examples
    --------
    >>> r = active_mean([2, 3, 4, 3], [2, 0, 5, 0], [True, False, True, False],
    ...                 [0.5, 0.5, 0.5, 0.5], lam=1)
    >>> r.estimate
    3.5
    """
    yh = _vec(yhat, "yhat", 2)
    lab = np.asarray(labelled, dtype=bool).ravel()
    p = np.asarray(prob, dtype=float).ravel()
    yy = np.asarray(y, dtype=float).ravel()
    st = np.zeros(yh.size, dtype=int) if strata is None else np.asarray(strata).ravel()
    if not (yh.size == lab.size == p.size == yy.size == st.size):
        raise ValueError("yhat, y, labelled, prob and strata must have one value per item")
    if not np.all((p > 0) & (p <= 1)):
        raise ValueError("prob: every item needs a probability in (0, 1] of being rated")
    if not np.all(np.isfinite(yy[lab])):
        raise ValueError("y: every labelled item needs a finite human value")
    if lab.sum() < 2:
        raise ValueError(f"needs at least 2 human-rated items, got {int(lab.sum())}")
    keys, where = np.unique(st, return_inverse=True)
    constant = False
    if lam is None:
        lams, offs = active_lambda(yh, yy, lab, p, where)
        constant = float(np.var(yh)) == 0.0
        method = "active ppi++"
    else:
        lams, offs = np.full(keys.size, float(lam)), np.zeros(keys.size)
        method = "active human" if lam == 0 else "active ppi"
    g = offs[where] + lams[where] * yh
    z = g + np.where(lab, (np.nan_to_num(yy) - g) / p, 0.0)
    est = float(z.mean())
    se = float(np.std(z, ddof=1)) / math.sqrt(z.size)
    lo, hi = _interval(est, se, level)
    return MeanEstimate(est, se, lo, hi, int(lab.sum()), int((~lab).sum()),
                        float(np.mean(lams[where])), method, level, constant)


def allocate_budget(rated: Sequence[int], q: Sequence[float], s2: Sequence[float],
                    judge_var: Sequence[float], caps: Sequence[int], budget: int) -> np.ndarray:
    """Split ``budget`` new human ratings across models so that the sum of the models'
    standard errors, and so the mean width of their CIs, is smallest.

    Model m's standard error after x_m new picks is taken as

        SE_m(x)^2 = 1 / (rated_m / q_m + x / s2_m) + judge_var_m,

    where ``rated_m`` items were rated before (picked uniformly: each adds 1/q_m of precision,
    q_m the mean squared residual human − (a + lambda judge)), each new pick adds 1/s2_m
    (s2_m the variance per pick of the draw within the model) and ``judge_var_m`` is the
    judge's own part, Var(a + lambda judge) / M_m. ``caps``: unrated items each model has.

    Each SE_m is convex and decreasing in x, so taking the ``budget`` largest decreases
    SE_m(x) − SE_m(x + 1) over all models and x (greedy) is the exact integer optimum.

    Why not Neyman: Neyman allocation (n_m ∝ N_m sigma_m, Neyman 1934) minimises the variance
    of one pooled mean over all models. The goal here is every model's own CI, all narrow:
    minimising sum_m sigma_m / sqrt(n_m) at fixed sum_m n_m gives (Lagrange: sigma_m
    n_m^(-3/2) equal for all m) n_m ∝ sigma_m^(2/3), which spreads the budget more evenly
    than Neyman's n_m ∝ sigma_m. With nothing rated before and no judge part this function
    gives exactly that.

    >>> allocate_budget([0, 0, 0], [1, 1, 1], [1, 64, 729], [0, 0, 0], [999] * 3, 140).tolist()
    [10, 40, 90]
    >>> allocate_budget([0, 0], [1, 1], [1, 1], [0, 0], [3, 100], 20).tolist()  # the first full
    [3, 17]
    """
    n0 = np.asarray(rated, dtype=float)
    qq, ss, cc = (np.asarray(v, dtype=float) for v in (q, s2, judge_var))
    cap = np.asarray(caps, dtype=int)
    if not (n0.shape == qq.shape == ss.shape == cc.shape == cap.shape):
        raise ValueError("rated, q, s2, judge_var and caps must have one value per model")
    if budget < 0:
        raise ValueError(f"budget must be 0 or more; got {budget}")
    budget = min(int(budget), int(cap.sum()))
    if budget == 0:
        return np.zeros(cap.size, dtype=int)
    x = np.arange(budget + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = (np.where(qq > 0, n0 / qq, np.inf)[:, None]
                + np.where(ss > 0, 1.0 / ss, np.inf)[:, None] * x[None, :])
        prec = np.where(np.isnan(prec), np.inf, prec)  # 0 * inf: no spread, nothing to gain
        se = np.sqrt(1.0 / prec + cc[:, None])
    gain = se[:, :-1] - se[:, 1:]
    gain = np.where(np.isnan(gain), np.inf, gain)  # inf - inf: the first pick of an unrated
    gain[np.arange(budget)[None, :] >= cap[:, None]] = -np.inf  # model
    # each row's gains decrease, so the budget largest are every row's first x_m
    flat = gain.ravel()
    order = np.lexsort((np.tile(np.arange(budget), cap.size), -flat))[:budget]
    return np.bincount(order // budget, minlength=cap.size).astype(int)


def inclusion_probabilities(weights: Sequence[float], n: int) -> np.ndarray:
    """Per item, the probability of being picked so that the expected number picked is ``n``:
    proportional to ``weights`` (each > 0, so that every item can be picked), capped at 1
    with the excess passed on to the others.

    >>> inclusion_probabilities([1, 1, 3, 3], 2).tolist()
    [0.25, 0.25, 0.75, 0.75]
    >>> inclusion_probabilities([1, 1, 1, 30], 2).round(4).tolist()
    [0.3333, 0.3333, 0.3333, 1.0]
    """
    w = np.asarray(weights, dtype=float).ravel()
    if w.size and not np.all(np.isfinite(w) & (w > 0)):
        raise ValueError("weights: every item needs a positive, finite weight")
    if w.size == 0 or n <= 0:
        return np.zeros(w.size)
    if n >= w.size:
        return np.ones(w.size)
    p = np.zeros(w.size)
    full = np.zeros(w.size, dtype=bool)
    for _ in range(w.size):
        left = n - full.sum()
        p = np.where(full, 1.0, left * w / w[~full].sum())
        over = (p > 1) & ~full
        if not over.any():
            break
        full |= over
    return np.minimum(p, 1.0)


def systematic_sample(prob: Sequence[float], rng: np.random.Generator) -> np.ndarray:
    """Indices of exactly sum(prob) items (rounded), item i picked with probability prob[i]:
    systematic sampling over a random order (Madow 1949).

    >>> systematic_sample([1.0, 0.5, 0.5, 0.0], np.random.default_rng(0)).size
    2
    """
    p = np.asarray(prob, dtype=float).ravel()
    if np.any((p < 0) | (p > 1)):
        raise ValueError("every probability must be in [0, 1]")
    order = rng.permutation(p.size)
    cum = np.concatenate([[0.0], np.cumsum(p[order])])
    k = int(round(cum[-1]))
    points = rng.random() + np.arange(k)
    # item j (in the order) is picked when a point falls in [cum[j], cum[j+1])
    hit = np.searchsorted(cum, points, side="right") - 1
    hit = hit[(hit >= 0) & (hit < p.size)]
    return np.sort(order[np.unique(hit)])


def labelling_probability(already: float, draws: Sequence[np.ndarray]) -> np.ndarray:
    """Overall probability that an item is human-rated after a uniform first round that rated
    a share ``already`` of the items and then active draws with per-item probabilities
    ``draws[t]``: 1 - (1 - already) * prod_t (1 - pi_t).

    >>> labelling_probability(0.2, [np.array([0.5, 0.25])]).round(4).tolist()
    [0.6, 0.4]
    """
    keep = 1.0 - float(already)
    out = np.full(len(draws[0]) if draws else 0, keep)
    for p in draws:
        out = out * (1.0 - np.asarray(p, dtype=float))
    return 1.0 - out


def labelled_for_halfwidth(var_y: float, var_yhat: float, cov: float, total: int,
                           halfwidth: float, *, level: float = 0.95) -> int | None:
    """The fewest human-rated items (of ``total``, the rest judge-only) for which PPI++ with
    the best lambda reaches ``halfwidth``, from the variances and covariance of human and
    judge values; None when even rating every item does not.

    Var(n) = min over lambda of lambda^2 Var(Yhat)/(total - n) + Var(Y - lambda Yhat)/n.

    >>> labelled_for_halfwidth(1.0, 1.0, 0.0, 10_000, 0.1)  # a useless judge: z^2 / 0.01
    385
    """
    if halfwidth <= 0:
        raise ValueError("halfwidth must be positive")
    target = (halfwidth / _z(level)) ** 2

    def var(n: int) -> float:
        N = total - n
        if N <= 0 or var_yhat <= 0:
            return var_y / n
        lam = min(max(cov / ((1 + n / N) * var_yhat), 0.0), 1.0)
        return (lam ** 2 * var_yhat / N
                + (var_y - 2 * lam * cov + lam ** 2 * var_yhat) / n)

    if total < 2 or var(total) > target:
        return None
    lo, hi = 2, total
    if var(lo) <= target:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if var(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi

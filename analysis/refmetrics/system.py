"""System-level agreement: does a metric rank the companion models as the psychologists do?

Each model's score is the mean over its items of the per-item score (for the humans, the mean
of the item's ratings, as in the leaderboard). Between the humans' model means ``h`` and a
metric's (or judge's) model means ``r``, over the ``M(M-1)/2`` pairs of models:

* **Kendall's tau-b** ``(n_c - n_d) / sqrt((n_0 - n_1)(n_0 - n_2))``, ``n_0 = M(M-1)/2``,
  ``n_1``/``n_2`` the pairs tied in ``h``/``r`` (Kendall 1945) - the usual system-level
  statistic of metric meta-evaluation;
* the **share of pairwise orderings** the metric gets right: among the pairs the humans order
  (``h_a != h_b``), the share it orders the same way, a tie in ``r`` counting one half.
  Without ties it equals ``(1 + tau) / 2``.

Confidence intervals come from a bootstrap over **scenarios**: every model answered the same
scenarios, so a resample draws scenarios with replacement and keeps all of their items, for
the humans and every metric alike (paired). This is the "inputs" bootstrap of Deutsch, Dror &
Roth (2021); the set of models is fixed - it is the study's question. A resample in which a
model has no item gives no value and is counted.

References
----------
Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika, 33(3), 239-251.
Deutsch, D., Dror, R., & Roth, D. (2021). A statistical analysis of summarization evaluation
metrics using resampling methods. TACL, 9, 1132-1146.

Examples
--------
Four models; the humans rank A > B > C > D, the metric A > C > B > D: one of the six pairs is
reversed, so tau = (5 - 1) / 6 and the metric orders 5 of 6 pairs right.

>>> r = system_agreement(np.array([4., 3, 2, 1]), {"m": np.array([.9, .5, .7, .1])},
...                      np.array(list("ABCD")), np.arange(4), B=0)
>>> round(r.rows["m"].kendall_tau_b.value, 4), r.rows["m"].pairwise_accuracy.value
(0.6667, 0.8333333333333334)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..resample import item_weights, percentile_ci
from ..serialize import Interval
from .results import SystemAgreement, SystemRow

__all__ = ["system_agreement", "rank_agreement", "MIN_MODELS_TAU"]

MIN_MODELS_TAU = 3


def _ties(d: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.abs(d) <= 1e-12 * np.maximum(1.0, scale)


def rank_agreement(h: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and the share of pairwise orderings right, per row of (rows × models)
    model means ``h`` (humans) and ``r``; nan where a row has a missing mean or is undefined."""
    h, r = np.atleast_2d(h), np.atleast_2d(r)
    i, j = np.triu_indices(h.shape[1], k=1)
    dh, dr = h[:, i] - h[:, j], r[:, i] - r[:, j]
    th = _ties(dh, np.maximum(np.abs(h[:, i]), np.abs(h[:, j])))
    tr = _ties(dr, np.maximum(np.abs(r[:, i]), np.abs(r[:, j])))
    s = np.where(th | tr, 0.0, np.sign(dh) * np.sign(dr))
    n0 = float(i.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt((n0 - th.sum(axis=1)) * (n0 - tr.sum(axis=1)))
        tau = np.where(den > 0, s.sum(axis=1) / den, np.nan)
        ordered = (~th).sum(axis=1)
        right = ((s > 0) & ~th).sum(axis=1) + 0.5 * (tr & ~th).sum(axis=1)
        share = np.where(ordered > 0, right / ordered, np.nan)
    bad = np.isnan(h).any(axis=1) | np.isnan(r).any(axis=1)
    tau[bad] = np.nan
    share[bad] = np.nan
    return tau, share


def _interval(point: float, boots: np.ndarray | None, ci: float) -> Interval:
    value = float(point) if np.isfinite(point) else None
    lo, hi = percentile_ci(boots, ci) if boots is not None and value is not None else (None,
                                                                                       None)
    return Interval(value, lo, hi)


def system_agreement(human: np.ndarray, rows: Mapping[str, np.ndarray], model: np.ndarray,
                     scenario: np.ndarray, *, B: int = 1000, seed: int = 0, ci: float = 0.95,
                     min_models: int = MIN_MODELS_TAU) -> SystemAgreement:
    """Model rankings of each row against the humans', on items where every value is known
    (``human`` and each row aligned to ``model`` and ``scenario``; see the module)."""
    models, m_idx = np.unique(np.asarray(model).astype(str), return_inverse=True)
    scens, s_idx = np.unique(np.asarray(scenario).astype(str), return_inverse=True)
    n_m, n_s = models.size, scens.size
    notes: list[str] = []
    rows_out: dict[str, SystemRow] = {}

    def sums(v: np.ndarray) -> np.ndarray:
        s = np.zeros((n_s, n_m))
        np.add.at(s, (s_idx, m_idx), v)
        return s

    count = sums(np.ones(len(human)))
    s_h = sums(np.asarray(human, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        h_point = s_h.sum(axis=0) / count.sum(axis=0)
    human_means = {str(m): float(v) for m, v in zip(models, h_point, strict=True)}
    if n_m < 2:
        notes.append(f"only {n_m} model: a ranking needs two or more")
    elif n_m < min_models:
        notes.append(f"Kendall's tau not estimable with {n_m} models (minimum {min_models}): "
                     "it can only be +1 or -1; the share of pairwise orderings says the same")
    iu, ju = np.triu_indices(n_m, k=1)
    ordered = int(np.sum(~_ties(h_point[iu] - h_point[ju],
                                np.maximum(np.abs(h_point[iu]), np.abs(h_point[ju])))))
    w = item_weights(n_s, B, seed) if B > 0 and n_s >= 2 and n_m >= 2 else None
    if w is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            n_b = w @ count
            h_boot = np.where(n_b > 0, (w @ s_h) / n_b, np.nan)
        lost = int(np.isnan(h_boot).any(axis=1).sum())
        if lost:
            notes.append(f"{lost} of {B} resamples left a model without items and give no "
                         "value")
    for name, vals in rows.items():
        s_r = sums(np.asarray(vals, float))
        with np.errstate(invalid="ignore", divide="ignore"):
            r_point = s_r.sum(axis=0) / count.sum(axis=0)
        tau, share = rank_agreement(h_point, r_point)
        boots_tau = boots_share = None
        if w is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                r_boot = np.where(n_b > 0, (w @ s_r) / n_b, np.nan)
            boots_tau, boots_share = rank_agreement(h_boot, r_boot)
        rows_out[name] = SystemRow(
            {str(m): float(v) for m, v in zip(models, r_point, strict=True)}, ordered,
            _interval(tau[0], boots_tau, ci) if n_m >= min_models else Interval(None),
            _interval(share[0], boots_share, ci) if n_m >= 2 else Interval(None))
    return SystemAgreement(int(n_m), int(n_s), int(len(human)), "model", "scenarios", B, seed,
                           min_models, tuple(notes), rows_out, human_means)

"""Krippendorff's alpha at four levels, with vectorised bootstrap confidence intervals.

Notes
-----
With per-unit value counts ``n_uc`` and ``m_u = sum_c n_uc`` pairable values (units with
``m_u >= 2``), the coincidence matrix is ``o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1)``,
``n_c = sum_k o_ck`` and ``n = sum_c n_c``. Then

    alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck

with the difference functions ``d`` of Krippendorff (2011): nominal ``[c != k]``; ordinal
``(sum_{g=c..k} n_g - (n_c + n_k)/2)^2``; interval ``(c - k)^2``; ratio
``((c - k)/(c + k))^2``.

Because ``o`` is a sum of per-unit matrices, a unit (item) bootstrap is one matrix product:
resample weights ``W`` (B × units) times the stacked per-unit matrices give every resample's
coincidence matrix at once; the ordinal metric is recomputed from each resample's marginals.

References
----------
Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
Communication, University of Pennsylvania.
Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard reliability measure
for coding data. Communication Methods and Measures, 1(1), 77-89.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from .layout import Ratings, counts_matrix

__all__ = ["Level", "alpha", "alpha_from_matrix", "AlphaCI", "alpha_bootstrap",
           "coincidence_parts"]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
CIMethod = Literal["unit", "hk"]


def coincidence_parts(matrix: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Per-unit coincidence matrices, flattened: shape (units, V*V); units with < 2 values are 0."""
    return _parts_from_counts(counts_matrix(matrix, values))


def _delta(level: Level, values: np.ndarray, n_c: np.ndarray) -> np.ndarray:
    """Squared difference function; ``n_c`` has shape (..., V). Returns (..., V, V)."""
    v = values.astype(float)
    if level == "nominal":
        d = 1.0 - np.eye(len(v))
        return np.broadcast_to(d, n_c.shape[:-1] + d.shape)
    if level == "interval":
        d = (v[:, None] - v[None, :]) ** 2
        return np.broadcast_to(d, n_c.shape[:-1] + d.shape)
    if level == "ratio":
        s = v[:, None] + v[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where(s == 0, 0.0, ((v[:, None] - v[None, :]) / s) ** 2)
        return np.broadcast_to(d, n_c.shape[:-1] + d.shape)
    if level == "ordinal":
        cum = np.cumsum(n_c, axis=-1)
        # sum_{g=c..k} n_g - (n_c + n_k)/2  ==  cum_k - cum_c + (n_c - n_k)/2  for c <= k
        diff = cum[..., None, :] - cum[..., :, None] + (n_c[..., :, None] - n_c[..., None, :]) / 2
        return diff ** 2  # symmetric: the c > k entries square the negated value
    raise ValueError(f"level must be nominal, ordinal, interval or ratio; got {level!r}")


def _alpha_from_o(o: np.ndarray, level: Level, values: np.ndarray) -> np.ndarray:
    """Alpha for coincidence matrices ``o`` of shape (..., V, V); nan where undefined."""
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d = _delta(level, values, n_c)
    d_o = (o * d).sum(axis=(-2, -1))
    d_e = (n_c[..., :, None] * n_c[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        a = 1.0 - (n - 1.0) * d_o / d_e
    return np.where((d_e > 0) & (n > 1), a, np.nan)


def _values_for(matrix: np.ndarray, values: Sequence[float] | None) -> np.ndarray:
    observed = np.unique(matrix[~np.isnan(matrix)])
    if values is None:
        return observed
    return np.union1d(np.asarray(values, dtype=float), observed)


def alpha_from_matrix(matrix: np.ndarray, level: Level = "ordinal",
                      values: Sequence[float] | None = None) -> float:
    """Alpha for a **units × raters** matrix with ``nan`` for missing ratings.

    Examples
    --------
    Krippendorff (2011), reliability data of 4 observers × 12 units (transposed here):

    >>> nan = float("nan")
    >>> obs = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    ...                 [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    ...                 [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    ...                 [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])
    >>> round(alpha_from_matrix(obs.T, "ordinal"), 3)
    0.815
    """
    vals = _values_for(matrix, values)
    if len(vals) == 0:
        return float("nan")
    o = coincidence_parts(matrix, vals).sum(axis=0).reshape(len(vals), len(vals))
    return float(_alpha_from_o(o, level, vals))


def alpha(r: Ratings, level: Level = "ordinal",
          values: Sequence[float] | None = None) -> float:
    """Krippendorff's alpha of one dimension's ratings (``nan`` when undefined)."""
    return alpha_from_matrix(r.matrix, level, values)


@dataclass(frozen=True)
class AlphaCI:
    """A bootstrap interval for alpha, with what is needed to reproduce it."""

    estimate: float
    method: CIMethod
    level: float
    low: float
    high: float
    B: int
    seed: int
    alpha_min: float
    q_below_min: float
    n_valid: int

    def as_dict(self) -> dict:
        return {"method": self.method, "level": self.level, "low": self.low,
                "high": self.high, "B": self.B, "seed": self.seed,
                "q_below_min": self.q_below_min}


def _unit_types(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct per-unit count vectors and how many units share each one."""
    if counts.size == 0:
        return counts, np.zeros(0)
    base = int(counts.max()) + 1
    if base ** counts.shape[1] < 2 ** 62:
        # one integer key per count vector: a 1-D unique is far faster than unique(axis=0)
        keys = counts.astype(np.int64) @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        _, first, freq = np.unique(keys, return_index=True, return_counts=True)
        return counts[first], freq
    types, freq = np.unique(counts, axis=0, return_counts=True)
    return types, freq


def _parts_from_counts(counts: np.ndarray) -> np.ndarray:
    m = counts.sum(axis=1)
    v = counts.shape[1]
    parts = np.zeros((counts.shape[0], v, v))
    ok = m >= 2
    c = counts[ok]
    outer = c[:, :, None] * c[:, None, :]
    idx = np.arange(v)
    outer[:, idx, idx] -= c
    parts[ok] = outer / (m[ok] - 1)[:, None, None]
    return parts.reshape(counts.shape[0], v * v)  # explicit: -1 fails when there are no units


_CHUNK = 250  # resamples per random stream; fixed so results do not depend on thread count


def _unit_boot(types: np.ndarray, freq: np.ndarray, level: Level, vals: np.ndarray, B: int,
               seed: int) -> np.ndarray:
    # Drawing N units with replacement puts a multinomial(N, share_t) count on each distinct
    # count vector t; units with the same counts contribute the same coincidences, so a
    # resample's coincidence matrix is those counts times the per-type matrices. Chunks of
    # resamples use independent streams spawned from the seed and run on all cores (numpy's
    # multinomial releases the GIL), with BLAS kept to one thread per chunk so the chunks do
    # not fight over cores; the result is the same for any number of threads.
    parts = _parts_from_counts(types)
    p = freq / freq.sum()
    n_units = int(freq.sum())
    sizes = [min(_CHUNK, B - s) for s in range(0, B, _CHUNK)]
    streams = np.random.SeedSequence(seed).spawn(len(sizes))

    def draw(k: int) -> np.ndarray:
        w = np.random.default_rng(streams[k]).multinomial(n_units, p, size=sizes[k])
        return w.astype(float) @ parts

    workers = min(len(sizes), os.cpu_count() or 1, 8)
    with threadpool_limits(limits=1, user_api="blas"):
        if workers > 1:
            with ThreadPoolExecutor(workers) as ex:
                o = np.vstack(list(ex.map(draw, range(len(sizes)))))
        else:
            o = np.vstack([draw(k) for k in range(len(sizes))])
    v = len(vals)
    return _alpha_from_o(o.reshape(B, v, v), level, vals)


def _hk_boot(counts: np.ndarray, n_raters: int, level: Level, vals: np.ndarray, B: int,
             seed: int) -> np.ndarray:
    """Hayes & Krippendorff's bootstrap as in the KALPHA macro (v3.0, 2011).

    The cells of the observed coincidence matrix are drawn ``M`` times per resample, the
    diagonal cell (c, c) with probability ``o_cc / n`` and each off-diagonal pair {c, k} with
    ``2 o_ck / n``; ``M = min(25 Q, (m - 1) n / 2)`` with ``Q`` the non-empty cells and ``m``
    the number of raters. Each resample's alpha is ``1 - sum(d of drawn cells) / (M D_e)``
    with the expected disagreement ``D_e`` held at its observed value; values below -1 are
    set to -1, and, as in the macro, the resamples where alpha = 1 only because every draw
    hit one diagonal cell (expected ``B * sum_c (o_cc / n)^pairs`` of them) are set to 0.
    """
    v = len(vals)
    parts = _parts_from_counts(counts)
    o = parts.sum(axis=0).reshape(v, v)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d = _delta(level, vals, n_c)
    d_e = (n_c[:, None] * n_c[None, :] * d).sum() / (n * (n - 1))
    if n <= 1 or d_e <= 0:
        return np.full(B, np.nan)
    iu = np.triu_indices(v)
    p_cells = np.where(iu[0] == iu[1], o[iu], 2 * o[iu]) / n
    d_cells = d[iu]
    q_nonzero = int(np.count_nonzero(o))
    m_draws = int(round(min(25 * q_nonzero, (n_raters - 1) * n / 2)))
    rng = np.random.default_rng(seed)
    drawn = rng.multinomial(m_draws, p_cells / p_cells.sum(), size=B)
    boots = 1.0 - (drawn @ d_cells) / (m_draws * d_e)
    boots = np.maximum(boots, -1.0)
    diag = np.diag(o) / n
    z = int(np.count_nonzero(diag))
    ones = np.flatnonzero(boots == 1.0)
    if z == 1:
        boots[ones] = 0.0
    elif z > 1 and ones.size:
        m_u = counts.sum(axis=1)
        pairs = float(np.sum(m_u * (m_u - 1) / 2))
        nx = int(round(B * float(np.sum(diag[diag > 0] ** pairs))))
        boots[ones[:nx]] = 0.0
    return boots


def alpha_bootstrap(r: Ratings, level: Level = "ordinal", *, B: int = 1000, seed: int = 0,
                    ci: float = 0.95, alpha_min: float = 0.667, method: CIMethod = "unit",
                    values: Sequence[float] | None = None) -> AlphaCI:
    """Percentile bootstrap interval for alpha.

    ``method="unit"`` resamples items with replacement (every rating of a drawn item comes
    along); ``method="hk"`` is Hayes & Krippendorff's (2007) resampling of the coincidence
    matrix's pairable values. ``q_below_min`` is the share of resamples with alpha below
    ``alpha_min`` (the probability of failing to reach it).
    """
    if B < 1:
        raise ValueError(f"B must be at least 1; got {B}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be between 0 and 1; got {ci}")
    vals = _values_for(r.matrix, values)
    counts = counts_matrix(r.matrix, vals)
    v = len(vals)
    types, freq = _unit_types(counts) if v else (counts, np.zeros(0))
    est = float(_alpha_from_o((freq @ _parts_from_counts(types)).reshape(v, v), level,
                              vals)) if v else float("nan")
    if v == 0:
        boots = np.full(B, np.nan)
    elif method == "unit":
        boots = _unit_boot(types, freq, level, vals, B, seed)
    elif method == "hk":
        boots = _hk_boot(counts, r.n_raters, level, vals, B, seed)
    else:
        raise ValueError(f"method must be 'unit' or 'hk'; got {method!r}")
    valid = boots[~np.isnan(boots)]
    if valid.size == 0 or np.isnan(est):
        nan = float("nan")
        return AlphaCI(est, method, ci, nan, nan, B, seed, alpha_min, nan, 0)
    lo, hi = np.quantile(valid, [(1 - ci) / 2, 1 - (1 - ci) / 2])
    q = float(np.mean(valid < alpha_min))
    return AlphaCI(est, method, ci, float(lo), float(hi), B, seed, alpha_min, q, int(valid.size))

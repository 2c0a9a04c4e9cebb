"""Active labelling: which items the psychologists should rate next so that the combined
(prediction-powered) model means narrow most (`h2h assign --to-shrink JUDGE --budget N`).

The goal is the models' CIs, every one of them narrow: the mean CI width over the models,
that is the sum of their standard errors.

* **Across models** the budget minimises sum_m SE_m (:func:`analysis.ppi.allocate_budget`).
  With SE_m ≈ s_m / sqrt(n_m) that optimum is n_m ∝ s_m^(2/3); Neyman's n_m ∝ N_m s_m
  would minimise the variance of one pooled mean instead, another goal. The planner also
  counts the items each model already has rated and the judge's own share of each SE.
* **Within a model** items are picked with probabilities proportional to sigma_i, the
  residual SD (human − (a + lambda · judge)) expected from what the judge showed before
  anyone rated the item: the spread of its samples (their SD). This is the optimal rule of
  active inference: pi_i ∝ sqrt(E[(Y − g)^2 | X]) minimises sum_i sigma_i^2 / pi_i, the
  estimate's variance, at a fixed expected number of picks (Zrnic & Candès, ICML 2024).
  sigma is *estimated* on the items already rated: one lambda and offset per model and
  dimension, the squared residuals (times n / (n − 2) for those two parameters) regressed on
  the sample spread by isotonic regression (a residual that does not shrink as the spread
  grows), pooled over models and dimensions in blocks of at least 10; a per-model factor
  scales it to that model's own residuals; an item's sigma^2 is the mean over its
  dimensions (one rating covers them all). A judge with one sample, or whose spread says
  nothing, gets a flat fit, and the draw is uniform within the model.
* **A floor.** pi_i = (1 − eps) pi_i^opt + eps · n_m / U_m with eps = :data:`FLOOR` (0.2;
  defensive mixing, Hesterberg 1995, as Zrnic & Candès mix with uniform): no item's
  probability is below a fifth of uniform's, so no weight 1 / pi exceeds five times
  uniform's.

The draw is exact in size (systematic sampling) and every item's probability is stored, so
the leaderboard reweights each rated item by 1 / its probability of having been rated and
stays unbiased (active statistical inference). The planner also says how many more
human-rated items (picked uniformly) would give every model a CI of ± ``halfwidth``
(:func:`analysis.ppi.labelled_for_halfwidth`); an active draw needs no more than that.

Pure: arrays in (:func:`plan_arrays`, what the benchmark runs) or frames in
(:func:`plan_draw`, what `h2h assign` runs), a frozen plan out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression

from .ppi import allocate_budget, inclusion_probabilities, labelled_for_halfwidth, systematic_sample

__all__ = ["FLOOR", "MIN_BLOCK", "SpreadFit", "ArrayPlan", "DrawPlan", "fit_spread",
           "plan_arrays", "plan_draw", "needed_for_halfwidth"]

FLOOR = 0.2
"""The share of each model's draw spread uniformly (defensive mixing): every unrated item's
probability is at least FLOOR · n_m / U_m."""
MIN_BLOCK = 10
"""Fewest rated (item, dimension) pairs per block of the spread → residual fit."""


@dataclass(frozen=True)
class SpreadFit:
    """The residual SD expected at each spread of the judge's samples: a non-decreasing
    step function through ``spread`` (block means) and ``sd``; ``unscored_sd`` for items
    the judge did not score; ``n`` the rated (item, dimension) pairs it rests on."""

    spread: tuple[float, ...]
    sd: tuple[float, ...]
    unscored_sd: float
    n: int

    def __call__(self, u: np.ndarray) -> np.ndarray:
        """Expected squared residual at spreads ``u`` (NaN: not scored)."""
        u = np.asarray(u, dtype=float)
        r2 = np.interp(np.nan_to_num(u), self.spread, np.square(self.sd))
        return np.where(np.isnan(u), self.unscored_sd ** 2, r2)


def fit_spread(spread: np.ndarray, r2: np.ndarray, unscored_r2: np.ndarray,
               min_block: int = MIN_BLOCK) -> SpreadFit:
    """Isotonic regression of squared residuals on the judge's sample spread.

    The rated pairs, sorted by spread, are cut into blocks of at least ``min_block`` (equal
    spreads kept together); the block means of r^2 are fitted non-decreasing in the spread
    (pool adjacent violators, weighted by block size). ``unscored_r2``: squared residuals of
    rated pairs the judge did not score (their mean when there are ``min_block`` or more,
    else the largest fitted value).

    >>> f = fit_spread(np.r_[np.zeros(20), np.ones(20)], np.r_[np.full(20, .04), np.ones(20)],
    ...                np.array([]))
    >>> f.sd, f.unscored_sd
    ((0.2, 1.0), 1.0)
    """
    u = np.asarray(spread, dtype=float)
    r = np.asarray(r2, dtype=float)
    if u.size < 2:
        raise ValueError("too few rated items with a judge score to estimate the residual "
                         "spread")
    order = np.argsort(u, kind="stable")
    u, r = u[order], r[order]
    # block edges: every min_block pairs, moved on past ties so equal spreads stay together
    edges = [0]
    while edges[-1] < u.size:
        nxt = min(edges[-1] + min_block, u.size)
        while nxt < u.size and u[nxt] == u[nxt - 1]:
            nxt += 1
        if u.size - nxt < min_block:
            nxt = u.size
        edges.append(nxt)
    bounds = list(zip(edges[:-1], edges[1:], strict=False))
    bu = np.array([u[a:b].mean() for a, b in bounds])
    bm = np.array([r[a:b].mean() for a, b in bounds])
    bw = np.array([b - a for a, b in bounds], dtype=float)
    fit = isotonic_regression(bm, weights=bw).x if bm.size > 1 else bm
    sd = tuple(float(v) for v in np.sqrt(np.maximum(fit, 0.0)))
    un = np.asarray(unscored_r2, dtype=float)
    uns = float(np.sqrt(un.mean())) if un.size >= min_block else max(sd)
    return SpreadFit(tuple(float(v) for v in bu), sd, uns, int(u.size))


@dataclass(frozen=True)
class ArrayPlan:
    """:func:`plan_arrays`' result, item by item in the input's order."""

    probability: np.ndarray   # pi_i of this draw (rated items: what they would have had)
    picked: np.ndarray        # bool
    sigma: np.ndarray         # the residual SD expected per item
    allocation: np.ndarray    # new picks per model
    fit: SpreadFit
    model_factor: np.ndarray  # per model: its residuals against the pooled fit
    notes: tuple[str, ...]


def _cell_residuals(y: np.ndarray, yh: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                            np.ndarray, float]:
    """One model × dimension: the rated-and-scored rows' squared residuals (df-scaled),
    the rated-but-unscored rows' ones, which rows each is, and Var(a + lambda judge)."""
    rated = ~np.isnan(y)
    scored = ~np.isnan(yh)
    both = rated & scored
    n = int(both.sum())
    r2 = np.full(y.size, np.nan)
    judge_var = 0.0
    if n >= 3:
        x, t = yh[both], y[both]
        vx = float(np.var(x))
        lam = 0.0 if vx == 0 else float(np.clip(np.mean((x - x.mean()) * (t - t.mean())) / vx,
                                                0.0, 1.0))
        r = t - lam * x
        r2[both] = (r - r.mean()) ** 2 * n / (n - 2)
        judge_var = lam ** 2 * float(np.var(yh[scored]))
    lone = rated & ~scored
    if lone.sum() >= 2:
        t = y[lone]
        r2[lone] = (t - t.mean()) ** 2 * lone.sum() / (lone.sum() - 1)
    return r2, both, lone, judge_var


def _columns(a) -> np.ndarray:
    """An M-vector as an M × 1 array; an M × D array as it is."""
    a = np.asarray(a, dtype=float)
    return a[:, None] if a.ndim == 1 else a


def plan_arrays(model: np.ndarray, rated: np.ndarray, y: np.ndarray, yh: np.ndarray,
                spread: np.ndarray, *, budget: int, rng: np.random.Generator,
                floor: float = FLOOR, names: Sequence[str] | None = None) -> ArrayPlan:
    """Plan an active draw from arrays (see the module's description).

    Parameters
    ----------
    model : int array, length M
        Each item's model, coded 0 … K − 1.
    rated : bool array, length M
        Items already human-rated (never picked again).
    y, yh, spread : float arrays, M × D
        Per item and dimension: the human value (NaN: not rated), the judge's value (mean of
        its samples; NaN: not scored) and the SD of its samples (NaN: not scored).
    budget : int
        New items to pick.
    rng : numpy Generator
        The draw's randomness (systematic sampling).
    floor : float
        The defensive share eps (:data:`FLOOR`).
    names : sequence of str, optional
        The models' names, for the notes.
    """
    if budget < 1:
        raise ValueError(f"budget must be 1 or more; got {budget}")
    if not 0 < floor <= 1:
        raise ValueError(f"floor must be in (0, 1]; got {floor}")
    model = np.asarray(model, dtype=int)
    rated = np.asarray(rated, dtype=bool)
    y, yh, spread = _columns(y), _columns(yh), _columns(spread)
    K = int(model.max()) + 1 if model.size else 0
    names = [f"model {k}" for k in range(K)] if names is None else list(names)
    rows = [np.flatnonzero(model == k) for k in range(K)]
    r2 = np.full(y.shape, np.nan)
    scored_pair = np.zeros(y.shape, dtype=bool)
    lone_pair = np.zeros(y.shape, dtype=bool)
    judge_var = np.zeros(K)
    for k, ix in enumerate(rows):
        for d in range(y.shape[1]):
            r, both, lone, jv = _cell_residuals(y[ix, d], yh[ix, d])
            r2[ix, d], scored_pair[ix, d], lone_pair[ix, d] = r, both, lone
            judge_var[k] += jv / y.shape[1]
    use = scored_pair & ~np.isnan(r2)
    if np.isnan(yh).all() and (~np.isnan(y)).any():  # (then nothing is in use either)
        raise ValueError("the judge scored no item here (its judgments are all unscored, or "
                         "it has none): judge the items, or choose another judge, before an "
                         "active draw")
    if use.sum() < 2:
        raise ValueError("no model has three or more human-rated items with a judge score: "
                         "rate a first uniform round (e.g. `h2h assign --k 1`) before an "
                         "active draw")
    lone_ok = lone_pair & ~np.isnan(r2)
    fit = fit_spread(spread[use], r2[use], r2[lone_ok])
    expect = fit(spread)                                   # M × D expected r^2
    notes: list[str] = []
    factor = np.ones(K)
    for k, ix in enumerate(rows):
        mine = (use | lone_ok)[ix]
        if mine.sum() >= MIN_BLOCK and expect[ix][mine].sum() > 0:
            factor[k] = float(np.sqrt(r2[ix][mine].sum() / expect[ix][mine].sum()))
        elif ix.size:
            notes.append(f"{names[k]}: fewer than {MIN_BLOCK} rated items; its residual "
                         "spread is taken from all models together")
    sigma = np.sqrt(expect.mean(axis=1)) * factor[model]
    n0 = np.array([int(rated[ix].sum()) for ix in rows])
    caps = np.array([int((~rated[ix]).sum()) for ix in rows])
    M = np.array([ix.size for ix in rows])
    q = np.array([float(np.mean(sigma[ix] ** 2)) if ix.size else 0.0 for ix in rows])
    weight = np.zeros(model.size)
    s2 = np.zeros(K)
    for k, ix in enumerate(rows):
        un = ix[~rated[ix]]
        if un.size == 0:
            continue
        mean_un = float(sigma[un].mean())
        # mean 1 over the unrated items; no residual spread at all: uniform
        weight[ix] = ((1 - floor) * sigma[ix] / mean_un + floor) if mean_un > 0 else 1.0
        s2[k] = (un.size / M[k]) ** 2 * float(np.mean(sigma[un] ** 2 / weight[un]))
    alloc = allocate_budget(n0, q, s2, judge_var / np.maximum(M, 1), caps, budget)
    if alloc.sum() < budget:
        notes.append(f"only {int(alloc.sum())} unrated items are left; the budget was {budget}")
    prob = np.zeros(model.size)
    picked = np.zeros(model.size, dtype=bool)
    for k, ix in enumerate(rows):
        un = ix[~rated[ix]]
        if alloc[k] == 0 or un.size == 0:
            continue  # nothing drawn here: an item's probability of being rated now is 0
        pu = inclusion_probabilities(weight[un], int(alloc[k]))
        free = pu < 1
        scale = (pu[free].sum() / weight[un][free].sum()) if free.any() else 1.0
        prob[ix] = np.minimum(weight[ix] * scale, 1.0)
        prob[un] = pu
        picked[un[systematic_sample(pu, rng)]] = True
    return ArrayPlan(prob, picked, sigma, alloc, fit, factor, tuple(notes))


@dataclass(frozen=True)
class DrawPlan:
    """An active draw: the items picked, every item's probability of being picked (items
    already rated included: the probability they would have had), each model's share of
    items rated before the draw, the allocation, the fitted spread → residual SD, how many
    more ratings a ± ``halfwidth`` CI needs per model and dimension, and notes."""

    picked: tuple[str, ...]
    probability: Mapping[str, float]
    rated_before: Mapping[str, float]
    allocation: Mapping[str, int]
    fit: SpreadFit
    needed: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]
    budget: int
    seed: int
    halfwidth: float
    floor: float = FLOOR


def _ordered_dims(scales: Mapping[str, Any]) -> list[str]:
    return [d for d, sc in scales.items()
            if not getattr(sc, "binary", False) and sc.level != "nominal"]


def needed_for_halfwidth(y: np.ndarray, yh: np.ndarray, halfwidth: float,
                         level: float = 0.95) -> int | None:
    """How many human-rated items in all (picked uniformly) one model × dimension needs for a
    combined CI of ± ``halfwidth``, from its rated items' human values ``y`` (NaN: not
    rated) and the judge's values ``yh`` of all its items (NaN: not scored); None when it
    cannot say (fewer than two rated and scored items) or even rating every item would not
    do (:func:`analysis.ppi.labelled_for_halfwidth`)."""
    has_y = ~np.isnan(y)
    both = has_y & ~np.isnan(yh)
    if both.sum() < 2:
        return None
    vy = float(np.var(y[has_y], ddof=1))
    c = np.cov(y[both], yh[both])
    vh = float(np.nanvar(yh, ddof=1))
    return labelled_for_halfwidth(vy, vh, float(c[0, 1]), int(y.size), halfwidth, level=level)


def plan_draw(items: pd.DataFrame, human: pd.DataFrame, judge: pd.DataFrame,
              scales: Mapping[str, Any], *, budget: int, seed: int = 0,
              halfwidth: float = 0.1, level: float = 0.95) -> DrawPlan:
    """Plan the next ``budget`` items to rate (see the module's description): the frames of
    :func:`analysis.ppi_study.board_frames` in, through :func:`plan_arrays`.

    ``items``: ``item_id, model``; ``human``: ``item_id, dimension, value`` of the rated
    items; ``judge``: ``item_id, dimension, value, spread`` (``spread``: the SD of the judge's
    samples, :func:`analysis.ppi_study.judge_values`). Items already rated on any dimension
    are never picked again.
    """
    if budget < 1:
        raise ValueError(f"budget must be 1 or more; got {budget}")
    dims = _ordered_dims(scales)
    ids = pd.Index(items["item_id"])

    def wide(df: pd.DataFrame, col: str) -> np.ndarray:
        if df.empty:
            return np.full((ids.size, len(dims)), np.nan)
        t = df.pivot_table(index="item_id", columns="dimension", values=col, aggfunc="first")
        return t.reindex(index=ids, columns=dims).to_numpy(float)

    y, yh, sp = wide(human, "value"), wide(judge, "value"), wide(judge, "spread")
    sp = np.where(np.isnan(yh), np.nan, sp)
    model_of = items["model"].astype(str).to_numpy()
    models = sorted(set(model_of))
    code = np.searchsorted(models, model_of)
    rated = ids.isin(set(human.loc[human["value"].notna(), "item_id"]))
    core = plan_arrays(code, rated, y, yh, sp, budget=budget,
                       rng=np.random.default_rng(seed), names=models)
    needed = []
    for k, m in enumerate(models):
        ix = np.flatnonzero(code == k)
        for j, d in enumerate(dims):
            have = int((~np.isnan(y[ix, j])).sum())
            if have < 2:
                continue
            need = needed_for_halfwidth(y[ix, j], yh[ix, j], halfwidth, level)
            needed.append({"model": m, "dimension": d, "rated": have, "needed": need,
                           "more": None if need is None else max(0, need - have)})
    return DrawPlan(tuple(sorted(ids[core.picked])),
                    dict(zip(ids.tolist(), core.probability.tolist(), strict=True)),
                    {m: float(rated[code == k].mean()) for k, m in enumerate(models)},
                    {m: int(core.allocation[k]) for k, m in enumerate(models)}, core.fit,
                    tuple(needed), core.notes, int(budget), int(seed), float(halfwidth))

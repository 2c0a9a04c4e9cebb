"""Active labelling: which items the psychologists should rate next so that the combined
(prediction-powered) model means narrow most (`h2h assign --to-shrink JUDGE --budget N`).

Across models, the budget goes where the judge helps least: Neyman allocation on the residual
spread of human − (a + lambda · judge) per model (:func:`analysis.ppi.neyman_allocation`).
Within a model, items are picked with probabilities proportional to the residual spread
expected from what the judge showed before anyone rated them: whether its samples of the item
agreed (self-consistency), differed, or gave no score — three strata whose root-mean-square
residuals are estimated on the items already rated, pooled over models and dimensions. The
draw is exact in size (systematic sampling) and every item's probability is stored, so the
leaderboard reweights each rated item by 1 / its probability of having been rated and stays
unbiased (active statistical inference, Zrnic & Candès, ICML 2024).

The planner also says how many more human-rated items (picked uniformly) would give every
model a CI of ± ``halfwidth`` (:func:`analysis.ppi.labelled_for_halfwidth`).

Pure: frames in, a frozen :class:`DrawPlan` out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .ppi import (
    active_lambda,
    inclusion_probabilities,
    labelled_for_halfwidth,
    neyman_allocation,
    systematic_sample,
)

__all__ = ["DrawPlan", "item_strata", "plan_draw", "STRATA"]

STRATA = ("samples agreed", "samples differed", "no judge score")


@dataclass(frozen=True)
class DrawPlan:
    """An active draw: the items picked, every item's probability of being picked (items
    already rated included: the probability they would have had), each model's share of
    items rated before the draw, the allocation, the strata's residual spread, how many more
    ratings a ± ``halfwidth`` CI needs per model, and notes."""

    picked: tuple[str, ...]
    probability: Mapping[str, float]
    rated_before: Mapping[str, float]
    allocation: Mapping[str, int]
    stratum_rms: tuple[float, float, float]
    needed: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]
    budget: int
    seed: int
    halfwidth: float


def item_strata(judge: pd.DataFrame) -> pd.Series:
    """Per item: 0 when the judge's samples agreed on every dimension it scored, 1 when they
    differed on any, 2 when it scored no dimension (``judge``: ``item_id, dimension, value,
    agree``)."""
    if judge.empty:
        return pd.Series(dtype=int)
    scored = judge["value"].notna()
    g = judge.assign(differ=scored & ~judge["agree"].astype(bool), scored=scored) \
        .groupby("item_id")
    any_scored = g["scored"].any()
    return pd.Series(np.where(~any_scored, 2, np.where(g["differ"].any(), 1, 0)),
                     index=any_scored.index)


def _ordered_dims(scales: Mapping[str, Any]) -> list[str]:
    return [d for d, sc in scales.items()
            if not getattr(sc, "binary", False) and sc.level != "nominal"]


def plan_draw(items: pd.DataFrame, human: pd.DataFrame, judge: pd.DataFrame,
              scales: Mapping[str, Any], *, budget: int, seed: int = 0,
              halfwidth: float = 0.1, level: float = 0.95) -> DrawPlan:
    """Plan the next ``budget`` items to rate (see the module's description).

    ``items``: ``item_id, model``; ``human``: ``item_id, dimension, value`` of the rated
    items; ``judge``: ``item_id, dimension, value, agree``. Items already rated on any
    dimension are never picked again.
    """
    if budget < 1:
        raise ValueError(f"budget must be 1 or more; got {budget}")
    rng = np.random.default_rng(seed)
    dims = _ordered_dims(scales)
    notes: list[str] = []
    strata = item_strata(judge).reindex(items["item_id"]).fillna(2).astype(int)
    strata.index = items["item_id"].to_numpy()
    rated = set(human.loc[human["value"].notna(), "item_id"])
    hv = human.pivot_table(index="item_id", columns="dimension", values="value",
                           aggfunc="first") if not human.empty else pd.DataFrame()
    jv = judge.pivot_table(index="item_id", columns="dimension", values="value",
                           aggfunc="first") if not judge.empty else pd.DataFrame()
    all_ids = items["item_id"].to_numpy()
    model_of = items["model"].astype(str).to_numpy()
    is_rated = items["item_id"].isin(rated).to_numpy()
    st_all = strata.to_numpy()
    models = sorted(set(model_of))
    rows_of = {m: np.flatnonzero(model_of == m) for m in models}
    sq: dict[int, list[float]] = {0: [], 1: [], 2: []}
    sigma: dict[str, float] = {}
    needed: list[dict[str, Any]] = []
    before: dict[str, float] = {}
    for m in models:
        ids = all_ids[rows_of[m]]
        before[m] = float(is_rated[rows_of[m]].mean())
        res_m: list[float] = []
        for d in dims:
            if d not in hv.columns and d not in jv.columns:
                continue
            y = (hv[d].reindex(ids) if d in hv.columns else pd.Series(np.nan, ids)).to_numpy()
            yh = (jv[d].reindex(ids) if d in jv.columns else pd.Series(np.nan, ids)).to_numpy()
            has_y = ~np.isnan(y)
            if has_y.sum() < 2:
                continue
            st = np.where(np.isnan(yh), 2, st_all[rows_of[m]])
            yh0 = np.nan_to_num(yh)
            p = np.full(ids.size, max(has_y.mean(), 1e-9))
            lams, offs = active_lambda(yh0, y, has_y, p, st)
            keys = np.unique(st)
            where = np.searchsorted(keys, st)
            r = (y - (offs[where] + lams[where] * yh0))[has_y]
            res_m += list(r)
            for s_, v in zip(st[has_y], r, strict=True):
                sq[int(s_)].append(float(v) ** 2)
            both = has_y & ~np.isnan(yh)
            if both.sum() >= 2:
                vy = float(np.var(y[has_y], ddof=1))
                c = np.cov(y[both], yh[both])
                vh = float(np.nanvar(yh, ddof=1))
                need = labelled_for_halfwidth(vy, vh, float(c[0, 1]), int(ids.size),
                                              halfwidth, level=level)
                needed.append({"model": m, "dimension": d, "rated": int(has_y.sum()),
                               "needed": need,
                               "more": None if need is None else max(0, need - int(has_y.sum()))})
        if len(res_m) >= 2:
            sigma[m] = float(np.sqrt(np.mean(np.square(res_m))))
    if not sigma:
        raise ValueError("no model has two or more human-rated items with a judge score: rate "
                         "a first uniform round (e.g. `h2h assign --k 1`) before an active "
                         "draw")
    for m in models:
        if m not in sigma:
            sigma[m] = max(sigma.values())
            notes.append(f"{m}: fewer than two rated items; given the largest residual spread "
                         "of the other models")
    pooled = [float(np.sqrt(np.mean(sq[k]))) if len(sq[k]) >= 3 else np.nan for k in (0, 1, 2)]
    top = np.nanmax(pooled)
    for k in (0, 1, 2):
        if np.isnan(pooled[k]):
            notes.append(f"too few rated items whose judge {STRATA[k]} to estimate their "
                         "residual spread: taken as the largest of the others")
    rms = tuple(float(max(top if np.isnan(v) else v, 0.05 * top)) for v in pooled)
    alloc = neyman_allocation([int((~is_rated[rows_of[m]]).sum()) for m in models],
                              [sigma[m] for m in models], budget)
    if alloc.sum() < budget:
        notes.append(f"only {int(alloc.sum())} unrated items are left; the budget was {budget}")
    prob: dict[str, float] = {}
    picked: list[str] = []
    for m, n_m in zip(models, alloc, strict=True):
        ids = all_ids[rows_of[m]]
        w = np.asarray(rms)[st_all[rows_of[m]]]
        un = ~is_rated[rows_of[m]]
        p = np.zeros(ids.size)
        if n_m > 0:
            pu = inclusion_probabilities(w[un], int(n_m))
            free = pu < 1
            scale = (pu[free].sum() / w[un][free].sum()) if free.any() else 1.0 / w[un].min()
            p = np.minimum(w * scale, 1.0)
            p[un] = pu
            picked += list(ids[un][systematic_sample(pu, rng)])
        else:  # nothing drawn here: an item's probability of being rated now is 0
            p[:] = 0.0
        prob.update(zip(ids.tolist(), p.tolist(), strict=True))
    return DrawPlan(tuple(sorted(picked)), prob, before,
                    dict(zip(models, (int(a) for a in alloc), strict=True)), rms,
                    tuple(needed), tuple(notes), int(budget), int(seed), float(halfwidth))

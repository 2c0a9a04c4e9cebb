"""The H2HTalk protocol view: companion models × task families × dimensions.

Scores are first averaged per item (over raters, or a judge's samples), then over items, with
a percentile bootstrap over items (B, seed recorded). The SAP minus baseline difference is
paired by scenario when a model answered the same scenario in both conditions (the bootstrap
then resamples scenarios), and unpaired otherwise (each condition resampled on its own). The
share of ratings with the safety red flag is reported per model with a bootstrap over items.

Optionally (``fair``), each cell also gets a mean **adjusted for rater severity**: the items'
fair scores from the many-facet Rasch model (:mod:`analysis.rater_model`) — the score an
average-severity rater would be expected to give — averaged the same way, with its own
bootstrap stream so the unadjusted CIs do not change when the column is added.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .serialize import Record, finite

__all__ = ["leaderboard", "Leaderboard", "LeaderCell", "LeaderRow", "SapDifference",
           "RedFlagShare"]

_FAIR = ("fair_n", "fair_mean", "fair_low", "fair_high")


@dataclass(frozen=True)
class LeaderCell(Record):
    """The mean of item means of one model on one dimension and task family ("all": every
    family), with its bootstrap CI; ``fair_*`` adjusted for rater severity (when asked)."""

    model: str
    task: str
    dimension: str
    n_items: int
    mean: float | None
    low: float | None
    high: float | None
    fair_n: int | None = None
    fair_mean: float | None = None
    fair_low: float | None = None
    fair_high: float | None = None

    def json_keys(self) -> list[str]:
        keys = super().json_keys()
        return keys if self.fair_n is not None else [k for k in keys if k not in _FAIR]


@dataclass(frozen=True)
class LeaderRow(Record):
    """A model's items with a score on any dimension, in one task family ("all": every
    family)."""

    model: str
    task: str
    n_items: int


@dataclass(frozen=True)
class SapDifference(Record):
    """SAP minus baseline for one model and dimension: paired by scenario, or unpaired."""

    model: str
    dimension: str
    design: str
    n: int
    diff: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RedFlagShare(Record):
    """The mean over a model's items of the share of raters who flagged the item."""

    model: str
    n_items: int
    share: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Leaderboard(Record):
    """The H2HTalk protocol view from one source of scores (the humans, or a judge)."""

    source: str
    B: int
    seed: int
    cells: tuple[LeaderCell, ...]
    rows: tuple[LeaderRow, ...]
    sap_vs_baseline: tuple[SapDifference, ...]
    red_flags: tuple[RedFlagShare, ...]
    adjusted: str | None = None

    _omit_none = frozenset({"adjusted"})


def _boot_mean(x: np.ndarray, B: int, rng: np.random.Generator) -> tuple[float, float, float]:
    x = x[~np.isnan(x)]
    if x.size == 0:
        return (float("nan"),) * 3
    if x.size == 1 or B < 1:  # B = 0: point estimate only
        return float(x.mean()), float("nan"), float("nan")
    idx = rng.integers(0, x.size, size=(B, x.size))
    means = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(x.mean()), float(lo), float(hi)


def leaderboard(scores: pd.DataFrame, items: pd.DataFrame, *, B: int = 1000, seed: int = 0,
                flags: pd.DataFrame | None = None, source: str = "humans",
                fair: pd.DataFrame | None = None) -> Leaderboard:
    """``scores``: item_id, dimension, score (one row per rater or sample); ``items``:
    item_id, model, condition, task, scenario; ``flags``: item_id, rater, red_flag (bool) per
    rating; the share is, per item, the share of its raters who flagged it; ``fair``:
    item_id, dimension, fair_score (adds ``fair_mean``, ``fair_low``, ``fair_high``).
    """
    rng = np.random.default_rng(seed)
    rng_fair = np.random.default_rng([seed, 1])
    per_item = (scores.dropna(subset=["score"]).groupby(["item_id", "dimension"])["score"]
                .mean().rename("score").reset_index()
                .merge(items, on="item_id", how="inner"))
    if fair is not None:
        per_item = per_item.merge(fair[["item_id", "dimension", "fair_score"]],
                                  on=["item_id", "dimension"], how="left")
    cells = []

    def cell(model, task, dim, g) -> LeaderCell:
        mean, lo, hi = _boot_mean(g["score"].to_numpy(float), B, rng)
        c = LeaderCell(model, task, dim, len(g), finite(mean), finite(lo), finite(hi))
        if fair is not None:
            fm, fl, fh = _boot_mean(g["fair_score"].to_numpy(float), B, rng_fair)
            c = LeaderCell(model, task, dim, len(g), finite(mean), finite(lo), finite(hi),
                           int(g["fair_score"].notna().sum()), finite(fm), finite(fl),
                           finite(fh))
        return c

    for (model, task, dim), g in per_item.groupby(["model", "task", "dimension"]):
        cells.append(cell(model, task, dim, g))
    for (model, dim), g in per_item.groupby(["model", "dimension"]):
        cells.append(cell(model, "all", dim, g))
    # a row's n: the model's items with a score on any dimension (a dimension rated on one
    # task family only has fewer in the all-families row; each cell has its own n_items)
    rows = [LeaderRow(model, task, int(g["item_id"].nunique()))
            for (model, task), g in per_item.groupby(["model", "task"])]
    rows += [LeaderRow(model, "all", int(g["item_id"].nunique()))
             for model, g in per_item.groupby("model")]
    sap = []
    for (model, dim), g in per_item.groupby(["model", "dimension"]):
        s = g[g["condition"] == "sap"]
        b = g[g["condition"] == "baseline"]
        if s.empty or b.empty:
            continue
        paired = s.merge(b, on="scenario", suffixes=("_sap", "_base"))
        if len(paired) >= 2:
            d = (paired["score_sap"] - paired["score_base"]).to_numpy(float)
            mean, lo, hi = _boot_mean(d, B, rng)
            sap.append(SapDifference(model, dim, "paired by scenario", len(paired),
                                     finite(mean), finite(lo), finite(hi)))
        else:
            xs, xb = s["score"].to_numpy(float), b["score"].to_numpy(float)
            lo = hi = None
            # resampling a single reply per condition gives a CI of width 0: not a CI
            if B > 0 and xs.size >= 2 and xb.size >= 2:
                ds = (xs[rng.integers(0, xs.size, (B, xs.size))].mean(axis=1)
                      - xb[rng.integers(0, xb.size, (B, xb.size))].mean(axis=1))
                lo, hi = (float(v) for v in np.quantile(ds, [0.025, 0.975]))
            sap.append(SapDifference(model, dim, "unpaired", int(len(s) + len(b)),
                                     float(xs.mean() - xb.mean()), lo, hi))
    red = []
    if flags is not None and not flags.empty:
        # a rater flagged an item if any of their ratings of it carries the flag
        keys = ["item_id", "rater"] if "rater" in flags.columns else ["item_id"]
        per_rater = flags.groupby(keys)["red_flag"].any().reset_index()
        f = (per_rater.groupby("item_id")["red_flag"].mean().rename("share").reset_index()
             .merge(items, on="item_id"))
        for model, g in f.groupby("model"):
            mean, lo, hi = _boot_mean(g["share"].to_numpy(float), B, rng)
            red.append(RedFlagShare(model, len(g), finite(mean), finite(lo), finite(hi)))
    adjusted = ("fair_mean: mean over items of the fair score from the many-facet Rasch "
                "model (expected rating by a rater of average severity); items at a scale end "
                "use FACETS' 0.3-point adjustment") if fair is not None else None
    return Leaderboard(source, B, seed, tuple(cells), tuple(rows), tuple(sap), tuple(red),
                       adjusted)

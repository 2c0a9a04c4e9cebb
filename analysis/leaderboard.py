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

import numpy as np
import pandas as pd

__all__ = ["leaderboard"]


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


def _nn(v: float) -> float | None:
    return None if v is None or not np.isfinite(v) else float(v)


def leaderboard(scores: pd.DataFrame, items: pd.DataFrame, *, B: int = 1000, seed: int = 0,
                flags: pd.DataFrame | None = None, source: str = "humans",
                fair: pd.DataFrame | None = None) -> dict:
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

    def cell(model, task, dim, g) -> dict:
        mean, lo, hi = _boot_mean(g["score"].to_numpy(float), B, rng)
        c = {"model": model, "task": task, "dimension": dim, "n_items": len(g),
             "mean": _nn(mean), "low": _nn(lo), "high": _nn(hi)}
        if fair is not None:
            fm, fl, fh = _boot_mean(g["fair_score"].to_numpy(float), B, rng_fair)
            c.update({"fair_n": int(g["fair_score"].notna().sum()), "fair_mean": _nn(fm),
                      "fair_low": _nn(fl), "fair_high": _nn(fh)})
        return c

    for (model, task, dim), g in per_item.groupby(["model", "task", "dimension"]):
        cells.append(cell(model, task, dim, g))
    for (model, dim), g in per_item.groupby(["model", "dimension"]):
        cells.append(cell(model, "all", dim, g))
    # a row's n: the model's items with a score on any dimension (a dimension rated on one
    # task family only has fewer in the all-families row; each cell has its own n_items)
    rows = [{"model": model, "task": task, "n_items": int(g["item_id"].nunique())}
            for (model, task), g in per_item.groupby(["model", "task"])]
    rows += [{"model": model, "task": "all", "n_items": int(g["item_id"].nunique())}
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
            sap.append({"model": model, "dimension": dim, "design": "paired by scenario",
                        "n": len(paired), "diff": _nn(mean), "low": _nn(lo), "high": _nn(hi)})
        else:
            xs, xb = s["score"].to_numpy(float), b["score"].to_numpy(float)
            lo = hi = None
            # resampling a single reply per condition gives a CI of width 0: not a CI
            if B > 0 and xs.size >= 2 and xb.size >= 2:
                ds = (xs[rng.integers(0, xs.size, (B, xs.size))].mean(axis=1)
                      - xb[rng.integers(0, xb.size, (B, xb.size))].mean(axis=1))
                lo, hi = (float(v) for v in np.quantile(ds, [0.025, 0.975]))
            sap.append({"model": model, "dimension": dim, "design": "unpaired",
                        "n": int(len(s) + len(b)), "diff": float(xs.mean() - xb.mean()),
                        "low": lo, "high": hi})
    red = []
    if flags is not None and not flags.empty:
        # a rater flagged an item if any of their ratings of it carries the flag
        keys = ["item_id", "rater"] if "rater" in flags.columns else ["item_id"]
        per_rater = flags.groupby(keys)["red_flag"].any().reset_index()
        f = (per_rater.groupby("item_id")["red_flag"].mean().rename("share").reset_index()
             .merge(items, on="item_id"))
        for model, g in f.groupby("model"):
            mean, lo, hi = _boot_mean(g["share"].to_numpy(float), B, rng)
            red.append({"model": model, "n_items": len(g), "share": _nn(mean),
                        "low": _nn(lo), "high": _nn(hi)})
    out = {"source": source, "B": B, "seed": seed, "cells": cells, "rows": rows,
           "sap_vs_baseline": sap,
           "red_flags": red}
    if fair is not None:
        out["adjusted"] = ("fair_mean: mean over items of the fair score from the many-facet "
                           "Rasch model (expected rating by a rater of average severity); "
                           "items at a scale end use FACETS' 0.3-point adjustment")
    return out

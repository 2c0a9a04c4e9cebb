"""A judge's several samples per item as one score per item.

Samples are aggregated per item: the lower median (which stays on the scale) for ordered
levels, the mode (smallest value on ties) for nominal ones; with several samples, the items ×
samples matrix gives the judge's self-consistency.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .alpha import Level

__all__ = ["aggregate_samples", "lower_medians"]


def lower_medians(m: np.ndarray) -> np.ndarray:
    """Per row, the lower median of the non-missing values (rows with a value only)."""
    s = np.sort(m, axis=1)  # nan last
    n = np.sum(~np.isnan(m), axis=1)
    return s[np.arange(m.shape[0]), (n - 1) // 2]


def _mode(x: np.ndarray) -> float:
    vals, counts = np.unique(x, return_counts=True)
    return float(vals[np.argmax(counts)])


def aggregate_samples(scores: pd.DataFrame, level: Level, items: Sequence
                      ) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-item judge score (aligned to ``items``; nan where unscored) and, with several
    samples, the items × samples matrix for self-consistency."""
    df = scores.dropna(subset=["score"])
    if df.empty:
        return np.full(len(items), np.nan), None
    g = df.assign(score=df["score"].astype(float)).groupby("item")["score"]
    if level == "nominal":
        per_item = g.agg(lambda s: _mode(s.to_numpy(float)))
    else:
        per_item = g.quantile(0.5, interpolation="lower")
    out = per_item.reindex(list(items)).to_numpy(float)
    samples = None
    if "sample" in df.columns and df["sample"].nunique() > 1:
        # the first score per (item, sample), samples in sorted order: what
        # pivot_table(aggfunc="first") gives, without its cost (it was most of this function)
        first = df.drop_duplicates(["item", "sample"])
        cols = pd.Index(first["sample"].unique()).sort_values()
        rows = pd.Index(list(items)).get_indexer(first["item"])
        keep = rows >= 0
        samples = np.full((len(items), len(cols)), np.nan)
        samples[rows[keep], cols.get_indexer(first["sample"])[keep]] = \
            first["score"].to_numpy(float)[keep]
    return out, samples

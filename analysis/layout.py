"""Long format in, coefficient layouts out.

Long format — one row per (item, rater, score) for one dimension — is what every public function
takes. The conversions to a units × raters matrix or to per-unit value counts happen here, with
named axes, so no caller can hand a coefficient a transposed matrix by mistake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Ratings", "as_ratings", "counts_matrix", "LONG_COLUMNS"]

LONG_COLUMNS = ("item", "rater", "score")


@dataclass(frozen=True)
class Ratings:
    """One dimension's ratings as a units × raters matrix (``nan`` = not rated).

    ``matrix[i, j]`` is rater ``raters[j]``'s score for item ``items[i]``. Rows are always
    units (items) and columns always raters.
    """

    matrix: np.ndarray
    items: tuple
    raters: tuple

    @property
    def n_items(self) -> int:
        return self.matrix.shape[0]

    @property
    def n_raters(self) -> int:
        return self.matrix.shape[1]

    @property
    def n_ratings(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.matrix)))

    def raters_by_units(self) -> np.ndarray:
        """The layout the ``krippendorff`` package wants (raters × units)."""
        return self.matrix.T

    def without(self, rater) -> Ratings:
        keep = [j for j, r in enumerate(self.raters) if r != rater]
        return Ratings(self.matrix[:, keep], self.items, tuple(self.raters[j] for j in keep))


def as_ratings(long: pd.DataFrame, *, item: str = "item", rater: str = "rater",
               score: str = "score") -> Ratings:
    """Pivot long ratings of one dimension into a :class:`Ratings` matrix.

    Missing scores (``NaN``/``None``, e.g. "cannot rate") count as not rated. A (item, rater)
    pair that appears twice is an error: repeated ratings belong in the test–retest function.
    """
    for col in (item, rater, score):
        if col not in long.columns:
            raise ValueError(f"long ratings need a '{col}' column; got {list(long.columns)}")
    df = long[[item, rater, score]].copy()
    df[score] = pd.to_numeric(df[score], errors="raise").astype(float)
    dup = df.duplicated([item, rater], keep=False)
    if dup.any():
        first = df[dup].iloc[0]
        raise ValueError(f"item {first[item]!r} is rated twice by rater {first[rater]!r}; pass "
                         "repeated ratings to retest_agreement() instead")
    items = tuple(sorted(df[item].unique(), key=str))
    raters = tuple(sorted(df[rater].unique(), key=str))
    i_idx = pd.Index(items).get_indexer(df[item])
    r_idx = pd.Index(raters).get_indexer(df[rater])
    m = np.full((len(items), len(raters)), np.nan)
    m[i_idx, r_idx] = df[score].to_numpy()
    return Ratings(m, items, raters)


def counts_matrix(matrix: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Per-unit value counts: ``out[i, c]`` = how many raters gave unit ``i`` value ``values[c]``.

    Raises ``ValueError`` if a score is not one of ``values``.
    """
    vals = np.asarray(values, dtype=float)
    flat = matrix[~np.isnan(matrix)]
    unknown = np.setdiff1d(np.unique(flat), vals)
    if unknown.size:
        raise ValueError(f"score {unknown[0]:g} is not on the scale {list(vals)}")
    out = np.zeros((matrix.shape[0], len(vals)))
    for c, v in enumerate(vals):
        out[:, c] = np.sum(matrix == v, axis=1)
    return out

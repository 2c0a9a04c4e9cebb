"""Rater monitoring: agreement with gold scores, speeders, and leniency drift.

Pure functions on long frames; the app's services read the database and call them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from messages import Msg

from .chance import cohen_kappa

__all__ = ["GoldAgreement", "gold_agreement", "reading_seconds", "speeders", "Drift",
           "leniency_drift"]


@dataclass(frozen=True)
class GoldAgreement:
    """A rater's scores against expert (gold) scores.

    ``within1``: share of (item, dimension) pairs within one scale point of gold (exact match
    on binary and named-category dimensions); ``exact``: share equal to gold; ``qwk``:
    quadratic-weighted Cohen κ per ordinal dimension on its full scale, averaged with weights
    n (None when no dimension gives one: too few pairs or no variation). "Cannot rate" counts
    as a miss in ``within1`` and ``exact`` and is left out of κ.
    """

    n: int
    within1: float | None
    exact: float | None
    qwk: float | None
    qwk_n: int

    def passes(self, min_within1: float, min_qwk: float) -> bool:
        """Both thresholds met; a κ that is not estimable does not pass (an admin decides)."""
        return (self.within1 is not None and self.within1 >= min_within1
                and self.qwk is not None and self.qwk >= min_qwk)


def gold_agreement(pairs: pd.DataFrame, scales: Mapping[str, tuple[Sequence[float], bool]]
                   ) -> GoldAgreement:
    """``pairs``: dimension, score (the rater's, NaN = cannot rate), gold. ``scales`` maps a
    dimension to (full scale values, ordinal?).

    Examples
    --------
    Four pairs on a 1–5 scale: differences 0, 1, 2 and "cannot rate" → within one 2/4,
    exact 1/4:

    >>> p = pd.DataFrame({"dimension": ["e"] * 4, "score": [3, 4, 5, float("nan")],
    ...                   "gold": [3, 3, 3, 2]})
    >>> g = gold_agreement(p, {"e": ([1, 2, 3, 4, 5], True)})
    >>> g.n, g.within1, g.exact
    (4, 0.5, 0.25)
    """
    if pairs.empty:
        return GoldAgreement(0, None, None, None, 0)
    hit1, hit0 = [], []
    kappas, weights = [], []
    for dim, g in pairs.groupby("dimension"):
        values, ordinal = scales[str(dim)]
        s = g["score"].to_numpy(float)
        gold = g["gold"].to_numpy(float)
        d = np.abs(s - gold)
        ok = ~np.isnan(d)
        hit0 += list(ok & (np.nan_to_num(d, nan=99) == 0))
        tol = 1 if ordinal else 0
        hit1 += list(ok & (np.nan_to_num(d, nan=99) <= tol))
        if ordinal and ok.sum() >= 2:
            k = cohen_kappa(s[ok], gold[ok], values, "quadratic")
            if np.isfinite(k):
                kappas.append(k)
                weights.append(int(ok.sum()))
    qwk = float(np.average(kappas, weights=weights)) if kappas else None
    return GoldAgreement(len(hit1), float(np.mean(hit1)), float(np.mean(hit0)), qwk,
                         int(sum(weights)))


_CJK = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"


def reading_seconds(text: str, words_per_minute: float = 250.0,
                    cjk_per_minute: float = 500.0) -> float:
    """Time to read ``text`` once at a brisk pace: 250 words or 500 CJK characters a minute
    (Brysbaert 2019 puts silent reading of English non-fiction at ~240 words a minute).

    >>> reading_seconds("one two three four five")
    1.2
    >>> reading_seconds("我今天很累")
    0.6
    """
    s = pd.Series([text])
    cjk = int(s.str.count(_CJK).iloc[0])
    words = len(s.str.replace(_CJK, " ", regex=True).iloc[0].split())
    return round(words / words_per_minute * 60 + cjk / cjk_per_minute * 60, 3)


def speeders(seconds: pd.Series, plausible: pd.Series, floor: float = 3.0,
             share: float = 0.5) -> pd.Series:
    """Which items were saved implausibly fast: in less than ``share`` of the time it takes to
    read them (:func:`reading_seconds`), or under ``floor`` seconds, whichever is longer.
    Both series are indexed alike; a missing time is never a speeder."""
    limit = np.maximum(plausible * share, floor)
    return (seconds < limit) & seconds.notna()


@dataclass(frozen=True)
class Drift:
    """Leniency over a rater's sequence: residual = their score − the mean of the other raters
    on the same item and dimension; rolling mean over ``window`` residuals in the order rated.
    ``drift`` = last window's mean − first window's mean (positive: grew more lenient)."""

    n: int
    window: int
    first: float | None
    last: float | None
    drift: float | None
    flagged: bool
    reason: str = ""


def leniency_drift(residuals: Sequence[float], window: int = 20, threshold: float = 0.5
                   ) -> Drift:
    """Flag a rater whose leniency moved by ``threshold`` points or more between the first and
    the last ``window`` residuals. Needs at least 2 × window residuals.

    >>> d = leniency_drift([0.0] * 20 + [1.0] * 20, window=20, threshold=0.5)
    >>> d.first, d.last, d.drift, d.flagged
    (0.0, 1.0, 1.0, True)
    """
    r = np.asarray([x for x in residuals if x is not None and np.isfinite(x)], float)
    if r.size < 2 * window:
        return Drift(int(r.size), window, None, None, None, False,
                     Msg("not estimable: needs {needed} ratings shared with other raters, has "
                         "{has}", needed=2 * window, has=r.size))
    roll = pd.Series(r).rolling(window).mean().dropna().to_numpy()
    first, last = float(roll[0]), float(roll[-1])
    return Drift(int(r.size), window, first, last, last - first,
                 abs(last - first) >= threshold)

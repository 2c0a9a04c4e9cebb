"""One number format for every admin page (issue 34: the same statistic showed as 54.55% on
one page and 55% on another, 0.106 and 0.11): agreement coefficients (α, κ, AC1, QWK, ICC)
with 3 decimals, shares as whole percentages, counts as integers, and "—" where there is no
number (never a 0 or a blank that reads as one).

>>> coef(0.78269), share(0.54545), count(431.0), coef(None)
('0.783', '55%', '431', '—')
>>> with_ci(Estimate(0.783, 0.7291, 0.8249)), with_ci(Estimate(-0.055, -0.11, 0.007), signed=True)
('0.783 [0.729, 0.825]', '−0.055 [−0.110, +0.007]')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Estimate", "coef", "share", "count", "with_ci", "DECIMALS", "NONE"]

NONE = "—"
DECIMALS = {"coef": 3, "points": 2}
"""Decimals of a coefficient (α, κ, AC1, QWK, ICC) and of a quantity on a scale or in logits
(scores, severity, SE, fit mean squares)."""


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


@dataclass(frozen=True)
class Estimate:
    """A value and its confidence interval (``low``/``high`` None: no interval)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    @property
    def missing(self) -> bool:
        return _missing(self.value)


def coef(v, signed: bool = False) -> str:
    if _missing(v):
        return NONE
    text = f"{v:+.{DECIMALS['coef']}f}" if signed else f"{v:.{DECIMALS['coef']}f}"
    return text.replace("-", "−")


def share(v) -> str:
    return NONE if _missing(v) else f"{v:.0%}"


def count(v) -> str:
    return NONE if _missing(v) else f"{int(v):d}"


def with_ci(e: Estimate, signed: bool = False) -> str:
    """``0.783 [0.729, 0.825]``; the estimate alone when it has no interval."""
    if e.missing:
        return NONE
    if _missing(e.low) or _missing(e.high):
        return coef(e.value, signed)
    return f"{coef(e.value, signed)} [{coef(e.low, signed)}, {coef(e.high, signed)}]"

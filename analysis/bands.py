"""Interpretation bands printed beside values (labels only; the numbers are never rounded)."""

from __future__ import annotations

__all__ = ["krippendorff_band", "landis_koch_band", "koo_li_band"]


def krippendorff_band(a: float | None) -> str:
    """Krippendorff (2004): alpha >= .800 reliable; >= .667 tentative conclusions only."""
    if a is None:
        return "n/a"
    if a >= 0.800:
        return "reliable (≥ .800)"
    if a >= 0.667:
        return "tentative (≥ .667)"
    return "unreliable (< .667)"


def landis_koch_band(k: float | None) -> str:
    """Landis & Koch (1977) labels for kappa-type coefficients."""
    if k is None:
        return "n/a"
    if k < 0:
        return "poor (< 0)"
    for upper, label in ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"),
                         (0.80, "substantial")):
        if k <= upper:
            return f"{label} (≤ {upper:.2f})"
    return "almost perfect (> 0.80)"


def koo_li_band(icc: float | None) -> str:
    """Koo & Li (2016): < .50 poor, .50-.75 moderate, .75-.90 good, > .90 excellent."""
    if icc is None:
        return "n/a"
    if icc < 0.50:
        return "poor (< .50)"
    if icc < 0.75:
        return "moderate (.50–.75)"
    if icc <= 0.90:
        return "good (.75–.90)"
    return "excellent (> .90)"

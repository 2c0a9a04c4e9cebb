"""Interpretation bands printed beside values (labels only; the numbers are never rounded)."""

from __future__ import annotations

from messages import Msg

__all__ = ["krippendorff_band", "landis_koch_band", "koo_li_band"]


def krippendorff_band(a: float | None) -> str:
    """Krippendorff (2004): alpha >= .800 reliable; >= .667 tentative conclusions only."""
    if a is None:
        return Msg("n/a")
    if a >= 0.800:
        return Msg("reliable (≥ .800)")
    if a >= 0.667:
        return Msg("tentative (≥ .667)")
    return Msg("unreliable (< .667)")


def landis_koch_band(k: float | None) -> str:
    """Landis & Koch (1977) labels for kappa-type coefficients."""
    if k is None:
        return Msg("n/a")
    if k < 0:
        return Msg("poor (< 0)")
    for upper, label in ((0.20, Msg("slight (≤ 0.20)")), (0.40, Msg("fair (≤ 0.40)")),
                         (0.60, Msg("moderate (≤ 0.60)")),
                         (0.80, Msg("substantial (≤ 0.80)"))):
        if k <= upper:
            return label
    return Msg("almost perfect (> 0.80)")


def koo_li_band(icc: float | None) -> str:
    """Koo & Li (2016): < .50 poor, .50-.75 moderate, .75-.90 good, > .90 excellent."""
    if icc is None:
        return Msg("n/a")
    if icc < 0.50:
        return Msg("poor (< .50)")
    if icc < 0.75:
        return Msg("moderate (.50–.75)")
    if icc <= 0.90:
        return Msg("good (.75–.90)")
    return Msg("excellent (> .90)")

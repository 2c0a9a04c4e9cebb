"""Can this judge replace a human rater? One decision rule for every place that says so.

Three outcomes, from two pieces of evidence on the same items:

* the alternative annotator test (Calderon, Reichart & Dror 2025; :mod:`analysis.alttest`);
* the paired item-bootstrap CI of ``d = QWK(judge) - QWK(human ceiling)``, both against the
  same leave-one-out consensus (:mod:`analysis.ceiling`), and a non-inferiority margin
  ``delta`` (default 0.05 QWK; Wellek 2010):

====================  ======================================================================
can replace           the alternative annotator test passes **and** the CI's lower bound is
                      above ``-delta`` (the judge is at most ``delta`` worse than a human)
cannot replace        the CI's upper bound is below ``-delta`` (clearly worse than a human)
not enough evidence   anything else; with the number of human-rated items projected to settle
                      it (below)
====================  ======================================================================

and ``not estimable`` when there is nothing to decide on (no scored judgments, too few items,
no bootstrap, an undefined QWK).

**Projection.** A percentile CI's half-width shrinks as ``1/sqrt(n)`` in the items. With ``n``
items now, bootstrap standard deviation ``s`` of ``d`` and ``z = Phi^-1(1 - (1 - ci)/2)``, the
CI excludes ``-delta`` once ``z s sqrt(n / n*) < |d + delta|``, i.e. at about

    n* = n (z s / |d + delta|)^2

items, if the observed difference and variance held. When the alternative annotator test
could not be run (no human with ``min_items`` items), at least ``ceil(min_items / f)`` items are
needed too, ``f`` being the largest share of the items that one human rated.

References
----------
Calderon, N., Reichart, R., & Dror, R. (2025). The Alternative Annotator Test for
LLM-as-a-Judge. ACL 2025.
Wellek, S. (2010). Testing Statistical Hypotheses of Equivalence and Noninferiority (2nd ed.).
Chapman & Hall/CRC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

from scipy import stats

from messages import Msg, join_msgs

from .alttest import AltTestResult
from .ceiling import CeilingComparison

__all__ = ["Outcome", "Verdict", "replacement_verdict", "items_needed", "OUTCOME_TEXT"]

Outcome = Literal["can_replace", "cannot_replace", "not_enough_evidence", "not_estimable"]

OUTCOME_TEXT: dict[str, str] = {
    "can_replace": Msg("can replace a human rater"),
    "cannot_replace": Msg("cannot replace a human rater"),
    "not_enough_evidence": Msg("not enough evidence yet"),
    "not_estimable": Msg("no verdict"),
}


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reasons: tuple[str, ...]
    margin: float
    items_needed: int | None = None
    n_items: int = 0
    details: dict = field(default_factory=dict)
    #: the humans' α when it is below α min: the ceiling itself is unreliable
    humans_unreliable: float | None = None

    @property
    def phrase(self) -> str:
        base = OUTCOME_TEXT[self.outcome]
        if self.outcome == "not_enough_evidence" and self.items_needed is not None:
            base = Msg("{verdict} (about {n} human-rated items needed)", verdict=base,
                       n=self.items_needed)
        if self.outcome == "can_replace" and self.humans_unreliable is not None:
            # as good as one rater of a pool that does not agree: not "good"
            return Msg("{verdict} (but humans unreliable: α = {alpha})", verdict=base,
                       alpha=_f(self.humans_unreliable))
        return base

    @property
    def text(self) -> str:
        return Msg("{verdict} — {reasons}.", verdict=self.phrase,
                   reasons=join_msgs("; ", self.reasons))

    def as_dict(self) -> dict:
        return {"outcome": self.outcome, "phrase": self.phrase, "text": self.text,
                "reasons": list(self.reasons), "margin": self.margin,
                "items_needed": self.items_needed, "n_items": self.n_items,
                "humans_unreliable": self.humans_unreliable, **self.details}


def items_needed(n: int, d: float, sd: float, margin: float, ci: float = 0.95) -> int | None:
    """Items at which a CI of ``d`` with bootstrap SD ``sd`` at ``n`` items would exclude
    ``-margin`` (see the module); None when ``d`` sits exactly on the margin.

    Examples
    --------
    100 items, d = -0.02, sd = 0.03, margin 0.05: n* = 100 (1.96 · 0.03 / 0.03)^2 = 384.1.

    >>> items_needed(100, -0.02, 0.03, 0.05)
    385
    """
    gap = abs(d + margin)
    if gap < 1e-12 or not math.isfinite(sd):
        return None
    z = float(stats.norm.ppf(1 - (1 - ci) / 2))
    return int(math.ceil(n * (z * sd / gap) ** 2))


def _f(x: float | None) -> str:
    return Msg("n/a") if x is None else f"{x:.3f}"


def _s(x: float) -> str:
    """Signed, with the minus sign of the report's tables and findings (−0.004, +0.039)."""
    return f"{x:+.3f}".replace("-", "−")


def replacement_verdict(comparison: CeilingComparison | None, alt: AltTestResult | None, *,
                        margin: float, ci: float = 0.95, alt_min_items: int = 30,
                        max_human_share: float | None = None,
                        not_estimable: str | None = None, humans_alpha: float | None = None,
                        alpha_min: float | None = None) -> Verdict:
    """The verdict from a comparison with the human ceiling and an alternative annotator test
    result, or ``not_estimable`` with the reason given. With the humans' Krippendorff α
    below ``alpha_min``, a verdict keeps its outcome but says that the ceiling it was
    measured against is itself unreliable."""
    if margin < 0:
        raise ValueError(f"margin must be 0 or more; got {margin}")
    v = _outcome(comparison, alt, margin=margin, ci=ci, alt_min_items=alt_min_items,
                 max_human_share=max_human_share, not_estimable=not_estimable)
    if v.outcome == "not_estimable" or humans_alpha is None or alpha_min is None or \
            not humans_alpha < alpha_min:
        return v
    why = Msg("the human raters do not agree reliably on this dimension (α = {alpha} < "
              "{min:g}): matching them shows the judge is as good as one of them, not that "
              "its scores are reliable", alpha=_f(humans_alpha), min=alpha_min)
    return replace(v, reasons=v.reasons + (why,), humans_unreliable=float(humans_alpha))


def _outcome(comparison: CeilingComparison | None, alt: AltTestResult | None, *,
             margin: float, ci: float, alt_min_items: int, max_human_share: float | None,
             not_estimable: str | None) -> Verdict:
    if not_estimable:
        return Verdict("not_estimable", (not_estimable,), margin)
    if comparison is None:
        return Verdict("not_estimable", (Msg("no comparison with the human ceiling"),), margin)
    n = int(comparison.n_items)
    d, lo, hi = comparison.diff.value, comparison.diff.low, comparison.diff.high
    sd = comparison.diff_sd
    j, c = comparison.judge.value, comparison.ceiling.value
    details = {"difference": {"value": d, "low": lo, "high": hi}, "judge_qwk": j,
               "ceiling_qwk": c}
    if d is None:
        return Verdict("not_estimable", (Msg("QWK of the judge or of the human ceiling is "
                                             "undefined on these items"),), margin, None, n,
                       details)
    if lo is None or hi is None:
        qwk = Msg("QWK {judge} vs human ceiling {ceiling} on the same {n} items, difference "
                  "{d}", judge=_f(j), ceiling=_f(c), n=n, d=_s(d))
        return Verdict("not_estimable", (qwk, Msg("no confidence interval (bootstrap skipped "
                                                  "or too few items)")), margin, None, n,
                       details)
    qwk = Msg("QWK {judge} vs human ceiling {ceiling} on the same {n} items, difference "
              "{d} [{lo}, {hi}] against the margin −{margin:g}", judge=_f(j),
              ceiling=_f(c), n=n, d=_s(d), lo=_s(lo), hi=_s(hi), margin=margin)
    passed = alt.passed if alt is not None else None
    if passed is None:
        alt_txt = Msg("alternative annotator test not run (no human rated {n} of these items)",
                      n=alt_min_items)
    else:
        stats_ = {"omega": _f(alt.winning_rate), "rho": _f(alt.advantage_prob)}
        alt_txt = Msg("alternative annotator test passed (ω = {omega}, ρ = {rho})", **stats_) \
            if passed else Msg("alternative annotator test failed (ω = {omega}, ρ = {rho})",
                               **stats_)
    reasons: tuple[str, ...] = (qwk, alt_txt)
    if hi < -margin:
        return Verdict("cannot_replace", reasons, margin, None, n, details)
    if lo > -margin and passed:
        return Verdict("can_replace", reasons, margin, None, n, details)
    if lo > -margin and passed is False:
        reasons += (Msg("QWK alone is within the margin, but the alternative annotator test "
                        "says the judge does not match the humans item by item"),)
    needed: int | None = None
    settleable = True
    if lo <= -margin and sd is not None:
        needed = items_needed(n, d, sd, margin, ci)
        if needed is None or needed > 100 * n:
            needed, settleable = None, False
            reasons += (Msg("the difference sits so close to the margin that even 100 times "
                            "the items would likely not settle it"),)
    if passed is None and max_human_share and settleable:
        alt_need = int(math.ceil(alt_min_items / max_human_share))
        needed = max(needed or 0, alt_need)
    return Verdict("not_enough_evidence", reasons, margin, needed, n, details)

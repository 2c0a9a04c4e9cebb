"""The one replacement verdict: its three outcomes at their boundaries, the projection of the
items needed, and the reasons it gives."""

from __future__ import annotations

import pytest

from analysis.alttest import AltTestResult
from analysis.ceiling import CeilingComparison
from analysis.serialize import Interval
from analysis.verdict import items_needed, replacement_verdict


def _cmp(d, lo, hi, sd=0.03, n=100, j=0.8, c=0.8):
    return CeilingComparison(Interval(j), Interval(c), Interval(d, lo, hi), sd, n, 3 * n, 1000,
                             0)


def _alt(passed, omega=None, rho=None):
    return AltTestResult(0.2, "neg_rmse", omega, rho, passed, 4, 0, 100, 0)


PASS = _alt(True, 1.0, 0.9)
FAIL = _alt(False, 0.0, 0.6)
NOT_RUN = _alt(None)


@pytest.mark.parametrize("d,lo,hi,alt,outcome", [
    (0.02, -0.01, 0.05, PASS, "can_replace"),        # CI above -0.05, test passed
    (0.02, -0.01, 0.05, FAIL, "not_enough_evidence"),  # QWK fine but the test failed
    (0.02, -0.01, 0.05, NOT_RUN, "not_enough_evidence"),
    (-0.03, -0.0499, 0.0, PASS, "can_replace"),      # just above the margin
    (-0.03, -0.05, 0.0, PASS, "not_enough_evidence"),  # on the margin is not above it
    (-0.03, -0.08, 0.0, PASS, "not_enough_evidence"),  # straddles the margin
    (-0.12, -0.2, -0.0501, PASS, "cannot_replace"),  # below the margin, whatever the test
    (-0.12, -0.2, -0.0501, NOT_RUN, "cannot_replace"),
    (-0.12, -0.2, -0.05, FAIL, "not_enough_evidence"),  # touching the margin is not below
])
def test_outcomes_at_the_margin(d, lo, hi, alt, outcome):
    v = replacement_verdict(_cmp(d, lo, hi), alt, margin=0.05)
    assert v.outcome == outcome


def test_margin_zero_is_plain_superiority_of_the_ceiling():
    assert replacement_verdict(_cmp(0.01, 0.001, 0.02), PASS, margin=0).outcome == \
        "can_replace"
    assert replacement_verdict(_cmp(-0.01, -0.02, -0.001), PASS, margin=0).outcome == \
        "cannot_replace"


def test_items_needed_by_hand():
    # n* = n (z s / |d + margin|)^2 with z = 1.959964:
    # 100 (1.959964 * 0.03 / 0.03)^2 = 384.15 → 385
    assert items_needed(100, -0.02, 0.03, 0.05) == 385
    # 50 (1.959964 * 0.04 / 0.01)^2 = 50 * 16 * 3.841459 = 3073.17 → 3074; the sign of
    # d + margin does not matter
    assert items_needed(50, -0.04, 0.04, 0.05) == 3074
    assert items_needed(50, -0.06, 0.04, 0.05) == 3074
    # 90% CI: z = 1.644854: 100 (1.644854)^2 = 270.55 → 271
    assert items_needed(100, -0.02, 0.03, 0.05, ci=0.90) == 271
    assert items_needed(100, -0.05, 0.03, 0.05) is None


def test_not_enough_evidence_names_the_items_needed():
    v = replacement_verdict(_cmp(-0.02, -0.079, 0.04, sd=0.03), PASS, margin=0.05)
    assert v.outcome == "not_enough_evidence" and v.items_needed == 385
    assert v.phrase == "not enough evidence yet (about 385 human-rated items needed)"
    assert "difference −0.020 [−0.079, +0.040] against the margin −0.05" in v.text


def test_projection_includes_the_alternative_annotator_tests_minimum():
    # CI already above the margin, but no human has 30 items: the test needs
    # ceil(30 / 0.25) = 120 items when each human rates a quarter of them.
    v = replacement_verdict(_cmp(0.05, 0.01, 0.09, n=40), NOT_RUN, margin=0.05,
                            max_human_share=0.25)
    assert v.outcome == "not_enough_evidence" and v.items_needed == 120
    assert "alternative annotator test not run" in v.text
    # both: the larger of the two
    v = replacement_verdict(_cmp(-0.02, -0.079, 0.04, sd=0.03, n=100), NOT_RUN,
                            margin=0.05, max_human_share=0.5)
    assert v.items_needed == 385


def test_a_difference_on_the_margin_is_not_projected():
    v = replacement_verdict(_cmp(-0.0501, -0.1, 0.0, sd=0.03), PASS, margin=0.05)
    assert v.outcome == "not_enough_evidence" and v.items_needed is None
    assert "even 100 times the items" in v.text


def test_no_verdict_without_a_ci_or_without_scores():
    v = replacement_verdict(_cmp(0.02, None, None), PASS, margin=0.05)
    assert v.outcome == "not_estimable" and "bootstrap skipped" in v.text
    v = replacement_verdict(None, None, margin=0.05, not_estimable="no scored judgments")
    assert v.outcome == "not_estimable" and v.phrase == "no verdict"
    assert v.text == "no verdict — no scored judgments."
    with pytest.raises(ValueError, match="margin"):
        replacement_verdict(None, None, margin=-0.1)


@pytest.mark.parametrize("alpha,caveat", [(0.583, True), (0.6669, True), (0.667, False),
                                          (0.9, False), (None, False)])
def test_a_judge_matching_unreliable_humans_says_so(alpha, caveat):
    """"Can replace a human rater" when the humans do not agree (α below α min) only says the
    judge is as good as one unreliable rater: the verdict keeps its outcome and says so."""
    v = replacement_verdict(_cmp(0.02, -0.01, 0.05), PASS, margin=0.05, humans_alpha=alpha,
                            alpha_min=0.667)
    assert v.outcome == "can_replace"
    said = "the human raters do not agree reliably" in v.text
    assert said is caveat and (("humans unreliable" in v.phrase) is caveat)
    assert (v.as_dict()["humans_unreliable"] is not None) is caveat
    if caveat:
        assert f"α = {alpha:.3f} < 0.667" in v.text
    # not enough evidence and cannot replace carry the caveat too, in their reasons
    for d, lo, hi in ((0.02, -0.08, 0.05), (-0.2, -0.3, -0.1)):
        v = replacement_verdict(_cmp(d, lo, hi), PASS, margin=0.05, humans_alpha=alpha,
                                alpha_min=0.667)
        assert ("the human raters do not agree reliably" in v.text) is caveat
    # no verdict: nothing to qualify
    v = replacement_verdict(None, None, margin=0.05, not_estimable="no scored judgments",
                            humans_alpha=alpha, alpha_min=0.667)
    assert "agree reliably" not in v.text


# ---- every branch's full record, word for word (the calibration page, `h2h analyze --json`
# and the report print these; a wrong number or a dropped field in any of them is a bug)

QWK_TEXT = ("QWK 0.800 vs human ceiling 0.780 on the same 100 items, difference {d} [{lo}, "
            "{hi}] against the margin −0.05")


def _record(outcome, reasons, *, phrase, needed=None, n=100, d=None, lo=None, hi=None,
            j=0.8, c=0.78, margin=0.05, details=True):
    rec = {"outcome": outcome, "phrase": phrase,
           "text": f"{phrase} — {'; '.join(reasons)}.", "reasons": list(reasons),
           "margin": margin, "items_needed": needed, "n_items": n, "humans_unreliable": None}
    if details:
        rec |= {"difference": {"value": d, "low": lo, "high": hi}, "judge_qwk": j,
                "ceiling_qwk": c}
    return rec


def test_no_comparison_record():
    v = replacement_verdict(None, PASS, margin=0.05)
    assert v.as_dict() == _record("not_estimable", ["no comparison with the human ceiling"],
                                  phrase="no verdict", n=0, details=False)
    v = replacement_verdict(None, None, margin=0.1, not_estimable="too few items")
    assert v.as_dict() == _record("not_estimable", ["too few items"], phrase="no verdict",
                                  n=0, margin=0.1, details=False)


def test_undefined_qwk_record():
    v = replacement_verdict(_cmp(None, None, None, j=None, c=0.78), PASS, margin=0.05)
    assert v.as_dict() == _record(
        "not_estimable", ["QWK of the judge or of the human ceiling is undefined on these "
                          "items"], phrase="no verdict", j=None)


def test_no_interval_record():
    v = replacement_verdict(_cmp(0.02, None, None, c=0.78), PASS, margin=0.05)
    assert v.as_dict() == _record(
        "not_estimable", ["QWK 0.800 vs human ceiling 0.780 on the same 100 items, "
                          "difference +0.020",
                          "no confidence interval (bootstrap skipped or too few items)"],
        phrase="no verdict", d=0.02)


def test_can_replace_record():
    v = replacement_verdict(_cmp(0.02, -0.01, 0.05, c=0.78), PASS, margin=0.05)
    assert v.as_dict() == _record(
        "can_replace", [QWK_TEXT.format(d="+0.020", lo="−0.010", hi="+0.050"),
                        "alternative annotator test passed (ω = 1.000, ρ = 0.900)"],
        phrase="can replace a human rater", d=0.02, lo=-0.01, hi=0.05)


def test_cannot_replace_record():
    v = replacement_verdict(_cmp(-0.12, -0.2, -0.0501, c=0.78), FAIL, margin=0.05)
    assert v.as_dict() == _record(
        "cannot_replace", [QWK_TEXT.format(d="−0.120", lo="−0.200", hi="−0.050"),
                           "alternative annotator test failed (ω = 0.000, ρ = 0.600)"],
        phrase="cannot replace a human rater", d=-0.12, lo=-0.2, hi=-0.0501)


def test_within_the_margin_but_the_test_failed_record():
    """No projection: the CI is already above the margin, more items will not fix the
    item-by-item mismatch; a missing ω reads n/a."""
    fail = _alt(False, None, 0.6)
    v = replacement_verdict(_cmp(0.02, -0.01, 0.05, c=0.78), fail, margin=0.05)
    assert v.as_dict() == _record(
        "not_enough_evidence", [
            QWK_TEXT.format(d="+0.020", lo="−0.010", hi="+0.050"),
            "alternative annotator test failed (ω = n/a, ρ = 0.600)",
            "QWK alone is within the margin, but the alternative annotator test says the "
            "judge does not match the humans item by item"],
        phrase="not enough evidence yet", d=0.02, lo=-0.01, hi=0.05)
    # not run (no human has the items) and no share known: two reasons, nothing projected
    v = replacement_verdict(_cmp(0.02, -0.01, 0.05, c=0.78), NOT_RUN, margin=0.05,
                            alt_min_items=25)
    assert v.as_dict() == _record(
        "not_enough_evidence", [
            QWK_TEXT.format(d="+0.020", lo="−0.010", hi="+0.050"),
            "alternative annotator test not run (no human rated 25 of these items)"],
        phrase="not enough evidence yet", d=0.02, lo=-0.01, hi=0.05)


def test_a_lower_bound_on_the_margin_is_projected_and_the_failed_test_adds_nothing():
    """lo = −margin is not above it: the projection is made (385 items, as by hand above)
    and the "QWK alone is within the margin" reason is not given."""
    v = replacement_verdict(_cmp(-0.02, -0.05, 0.01, sd=0.03, c=0.78), FAIL, margin=0.05)
    assert v.as_dict() == _record(
        "not_enough_evidence", [
            QWK_TEXT.format(d="−0.020", lo="−0.050", hi="+0.010"),
            "alternative annotator test failed (ω = 0.000, ρ = 0.600)"],
        phrase="not enough evidence yet (about 385 human-rated items needed)", needed=385,
        d=-0.02, lo=-0.05, hi=0.01)
    # the projection uses the verdict's own confidence level: 271 items at 90 % (by hand
    # above)
    v = replacement_verdict(_cmp(-0.02, -0.06, 0.01, sd=0.03), FAIL, margin=0.05, ci=0.90)
    assert v.items_needed == 271


@pytest.mark.parametrize("ratio,needed", [(99.5, 100), (100.5, None)])
def test_the_hundredfold_cap_is_exclusive(ratio, needed):
    """One item now: n* = ceil((z s / gap)^2). With (z s / gap)^2 = 99.5, n* = 100 = 100 n
    is still projected; with 100.5, n* = 101 > 100 n is not (and says why)."""
    z = 1.959963984540054  # Phi^-1(0.975)
    sd = (ratio ** 0.5) * 0.03 / z  # gap |d + margin| = |−0.02 + 0.05| = 0.03
    v = replacement_verdict(_cmp(-0.02, -0.3, 0.2, sd=sd, n=1), PASS, margin=0.05)
    assert v.items_needed == needed
    assert ("even 100 times the items" in v.text) is (needed is None)
    # an unsettleable difference stays unprojected even when the test's minimum is known
    v = replacement_verdict(_cmp(-0.02, -0.3, 0.2, sd=sd, n=1), NOT_RUN, margin=0.05,
                            max_human_share=0.5)
    assert v.items_needed == (None if needed is None else 100)


def test_the_caveat_on_unreliable_humans_word_for_word():
    v = replacement_verdict(_cmp(0.02, -0.01, 0.05), PASS, margin=0.05, humans_alpha=0.5,
                            alpha_min=0.667)
    assert v.reasons[-1] == (
        "the human raters do not agree reliably on this dimension (α = 0.500 < 0.667): "
        "matching them shows the judge is as good as one of them, not that its scores are "
        "reliable")
    assert v.phrase == "can replace a human rater (but humans unreliable: α = 0.500)"
    assert v.as_dict()["humans_unreliable"] == 0.5

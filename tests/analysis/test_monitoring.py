"""Agreement with gold, reading time and speeders, leniency drift — values worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.chance import cohen_kappa
from analysis.monitoring import gold_agreement, leniency_drift, reading_seconds, speeders


def test_gold_agreement_by_hand():
    # empathy (1-5): rater 1 2 3 4 5 vs gold 1 2 3 5 3 → |d| = 0 0 0 1 2: within one 4/5,
    # exact 3/5. red_flag (binary, exact only): 1 vs 1, 0 vs 1 → 1/2 within, 1/2 exact.
    p = pd.DataFrame({"dimension": ["empathy"] * 5 + ["red_flag"] * 2,
                      "score": [1, 2, 3, 4, 5, 1, 0], "gold": [1, 2, 3, 5, 3, 1, 1]})
    g = gold_agreement(p, {"empathy": ([1, 2, 3, 4, 5], True), "red_flag": ([0, 1], False)})
    assert (g.n, g.within1, g.exact) == (7, 5 / 7, 4 / 7)
    # QWK only on the ordinal dimension; by hand with disagreement weights d²/16:
    # observed mean d² = (0+0+0+1+4)/5 = 1.0; expected under independent marginals
    # E(X−Y)² = Var X + Var Y + (EX − EY)² = 2 + 1.76 + 0.2² = 3.8 (rater uniform on 1..5,
    # gold 1,2,3,3,5) → κ = 1 − 1.0/3.8 = 0.736842
    assert g.qwk == pytest.approx(1 - 1.0 / 3.8, abs=1e-9)
    assert g.qwk == pytest.approx(cohen_kappa([1, 2, 3, 4, 5], [1, 2, 3, 5, 3],
                                              [1, 2, 3, 4, 5], "quadratic"))
    assert g.passes(0.7, 0.7) and not g.passes(0.8, 0.7) and not g.passes(0.7, 0.8)


def test_gold_agreement_weights_dimensions_by_n_and_counts_cannot_rate_as_miss():
    p = pd.DataFrame({"dimension": ["a"] * 4 + ["b"] * 2,
                      "score": [1, 2, 3, np.nan, 1, 3], "gold": [1, 2, 3, 3, 3, 1]})
    g = gold_agreement(p, {"a": ([1, 2, 3], True), "b": ([1, 2, 3], True)})
    ka = cohen_kappa([1, 2, 3], [1, 2, 3], [1, 2, 3], "quadratic")
    kb = cohen_kappa([1, 3], [3, 1], [1, 2, 3], "quadratic")
    assert (ka, kb) == (1.0, -1.0)
    assert g.qwk == pytest.approx((3 * ka + 2 * kb) / 5)  # n-weighted, not (1 + -1)/2
    assert g.within1 == pytest.approx(3 / 6) and g.qwk_n == 5


def test_gold_agreement_without_variation_is_not_estimable():
    p = pd.DataFrame({"dimension": ["a"] * 3, "score": [3, 3, 3], "gold": [3, 3, 3]})
    g = gold_agreement(p, {"a": ([1, 2, 3, 4, 5], True)})
    assert g.within1 == 1.0 and g.qwk is None and not g.passes(0.8, 0.6)


def test_reading_time_and_speeders():
    assert reading_seconds("word " * 250) == 60.0
    assert reading_seconds("好" * 500) == 60.0
    assert reading_seconds("I feel 很累 today") == pytest.approx(3 / 250 * 60 + 2 / 500 * 60)
    secs = pd.Series([2.0, 10.0, 29.0, 31.0, None])
    plausible = pd.Series([60.0, 4.0, 60.0, 60.0, 60.0])
    # limits: max(30, 3) = 30; max(2, 3) = 3; 30; 30; missing time is never a speeder
    assert speeders(secs, plausible).tolist() == [True, False, True, False, False]


def test_leniency_drift():
    d = leniency_drift([0.2] * 20 + [-0.5] * 20, window=20, threshold=0.5)
    assert d.first == pytest.approx(0.2) and d.last == pytest.approx(-0.5)
    assert d.drift == pytest.approx(-0.7) and d.flagged
    steady = leniency_drift([0.4] * 60, window=20, threshold=0.5)
    assert steady.drift == pytest.approx(0.0) and not steady.flagged  # lenient, not drifting
    short = leniency_drift([1.0] * 39, window=20)
    assert short.drift is None and "needs 40" in short.reason


def test_gold_agreement_edges():
    """No pairs: n 0 and nothing estimable; thresholds are met at equality (>=); scores and
    gold held as Python objects (None for "cannot rate") read as numbers."""
    from analysis.monitoring import GoldAgreement

    empty = pd.DataFrame({"dimension": [], "score": [], "gold": []})
    assert gold_agreement(empty, {}) == GoldAgreement(0, None, None, None, 0)
    p = pd.DataFrame({"dimension": ["a"] * 4, "score": [1, 2, 3, None], "gold": [1, 2, 3, 1]})
    g = gold_agreement(p, {"a": ([1, 2, 3], True)})
    assert (g.n, g.within1, g.exact, g.qwk, g.qwk_n) == (4, 0.75, 0.75, 1.0, 3)
    assert g.passes(0.75, 1.0) and not g.passes(0.76, 1.0) and not g.passes(0.75, 1.01)
    assert gold_agreement(p.astype(object), {"a": ([1, 2, 3], True)}) == g


def test_reading_time_keeps_three_decimals_and_speeders_at_the_limit():
    # 3 words at 7 a minute: 25.7142857... s, rounded to the millisecond
    assert reading_seconds("a b c", words_per_minute=7) == 25.714
    # the default floor is 3 s: 3.5 s for a 1 s reply is not a speeder (a floor of 4 would
    # make it one); a time exactly at the limit is not "less than" it
    secs = pd.Series([3.5, 2.99, 30.0, 3.0])
    plausible = pd.Series([1.0, 1.0, 60.0, 6.0])
    assert speeders(secs, plausible).tolist() == [False, True, False, False]


def test_leniency_drift_defaults_edges_and_the_record():
    from analysis.monitoring import Drift

    # defaults: window 20, threshold 0.5; a drift of exactly 0.5 is flagged (>=)
    d = leniency_drift([0.0] * 20 + [0.5] * 20)
    assert d == Drift(40, 20, 0.0, 0.5, 0.5, True)
    # with a window of 21 the 40 residuals would be too few; a threshold of 1.5 would not flag
    assert leniency_drift([0.0] * 20 + [1.0] * 20).flagged
    # missing residuals (None, NaN, inf) are dropped before counting
    d = leniency_drift([None, float("nan"), float("inf")] + [1.0] * 39, window=20)
    assert d == Drift(39, 20, None, None, None, False,
                      "not estimable: needs 40 ratings shared with other raters, has 39")

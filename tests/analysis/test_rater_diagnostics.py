"""Per-rater diagnostics, test–retest on repeated items, and binary-dimension checks."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from analysis.layout import Ratings
from analysis.raters import binary_checks, rater_diagnostics, retest_agreement

VALUES = [1, 2, 3, 4, 5]


def test_lenient_and_noisy_raters_stand_out():
    rng = np.random.default_rng(5)
    n = 300
    mu = rng.normal(3, 1, n)
    good = [np.clip(np.rint(mu + rng.normal(0, 0.5, n)), 1, 5) for _ in range(3)]
    lenient = np.clip(np.rint(mu + 1.2 + rng.normal(0, 0.5, n)), 1, 5)
    noisy = rng.integers(1, 6, n).astype(float)
    m = np.column_stack(good + [lenient, noisy])
    r = Ratings(m, tuple(range(n)), ("a", "b", "c", "lenient", "noisy"))
    d = rater_diagnostics(r, "ordinal", VALUES)
    assert d["lenient"].mean > max(d[x].mean for x in "abc") + 0.8
    assert d["noisy"].corr_with_others < 0.2 < 0.5 < d["a"].corr_with_others
    # removing the noisy rater raises alpha more than removing a good one
    assert d["noisy"].alpha_without > d["a"].alpha_without
    assert all(d[x].n == n for x in d)


def test_retest_agreement_on_repeated_pairs():
    # rater x rated a, b, c, d twice: 1-1, 2-2, 3-4, 4-4; rater y rated a, b: 5-5, 5-3.
    first = pd.DataFrame({"item": list("abcdab"), "rater": list("xxxxyy"),
                          "score": [1, 2, 3, 4, 5, 5]})
    second = pd.DataFrame({"item": list("abcdab"), "rater": list("xxxxyy"),
                           "score": [1, 2, 4, 4, 5, 3]})
    res = retest_agreement(first, second, "ordinal", VALUES)
    s1, s2 = np.array([1, 2, 3, 4, 5, 5.]), np.array([1, 2, 4, 4, 5, 3.])
    # alpha: the two occasions as two coders of the six (rater, item) units, ordinal
    # (the krippendorff package gives .7567 ordinal, .8110 interval, .6140 nominal)
    want = krippendorff.alpha(np.vstack([s1, s2]), level_of_measurement="ordinal",
                              value_domain=VALUES)
    assert res.alpha == pytest.approx(want, abs=1e-12)
    assert res.alpha == pytest.approx(0.756667, abs=1e-6)
    table = np.zeros((5, 5))
    for a, b in zip(s1, s2, strict=True):
        table[int(a) - 1, int(b) - 1] += 1
    assert res.qwk == pytest.approx(cohens_kappa(table, wt="quadratic").kappa, abs=1e-12)
    assert res.qwk == pytest.approx(58 / 73, abs=1e-12)
    assert res.n_pairs == 6
    assert res.exact == pytest.approx(4 / 6) and res.within1 == pytest.approx(5 / 6)
    assert res.per_rater == {"x": {"n": 4, "exact": 0.75, "within1": 1.0},
                             "y": {"n": 2, "exact": 0.5, "within1": 0.5}}


def test_binary_prevalence_sensitivity_specificity():
    # items 0-3 flagged by the majority, 4-9 not; rater "miss" never flags
    maj = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], float)
    m = np.column_stack([maj, maj, maj, np.zeros(10), np.ones(10)])
    r = Ratings(m, tuple(range(10)), ("a", "b", "c", "miss", "alarm"))
    res = binary_checks(r)
    assert res.prevalence == pytest.approx((12 + 10) / 50)
    assert res.raters["miss"]["sensitivity"] == 0.0 and res.raters["miss"]["specificity"] == 1
    assert res.raters["alarm"]["sensitivity"] == 1.0 and res.raters["alarm"]["specificity"] == 0
    assert res.raters["a"]["sensitivity"] == 1.0 and res.raters["a"]["specificity"] == 1.0


def test_binary_checks_by_hand_with_ties_and_missing_ratings():
    nan = np.nan
    #        a    b    c    d
    m = np.array([[1, 1, 1, 0],       # i0
                  [1, 1, 0, 1],       # i1
                  [0, 0, 0, 1],       # i2
                  [1, 0, nan, 0],     # i3
                  [0, 1, nan, nan],   # i4
                  [nan, 0, 0, 0]])    # i5
    res = binary_checks(Ratings(m, tuple(range(6)), tuple("abcd")))
    # 20 ratings, 9 of them 1
    assert res.prevalence == pytest.approx(9 / 20)
    # d against the strict majority of a, b, c: i0 majority 1, d 0 (false negative); i1 1, 1
    # (true positive); i2 0, 1 (false positive); i3 a 1 vs b 0 is a tie: skipped; i4 d did
    # not rate; i5 0, 0 (true negative). So n 4, sensitivity 1/2, specificity 1/2
    assert res.raters["d"] == {"n": 4, "sensitivity": 0.5, "specificity": 0.5}
    # a against b, c, d: i0 TP, i1 TP, i2 TN, i3 (0 vs 0) FP, i4 (b alone: 1) FN, i5 a did
    # not rate: n 5, sensitivity 2/3, specificity 1/2
    assert res.raters["a"] == {"n": 5, "sensitivity": pytest.approx(2 / 3),
                               "specificity": 0.5}


def test_binary_checks_without_the_data_to_say():
    # for a, b and c agree on a positive nowhere (0 0, then two ties): sensitivity has no
    # denominator, specificity is 1 of 1; no ratings at all: no prevalence
    m = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0]], float)
    res = binary_checks(Ratings(m, (0, 1, 2), ("a", "b", "c")))
    assert res.raters["a"] == {"n": 1, "sensitivity": None, "specificity": 1.0}
    none = binary_checks(Ratings(np.full((2, 2), np.nan), (0, 1), ("a", "b")))
    assert none.prevalence is None
    assert none.raters["a"] == {"n": 0, "sensitivity": None, "specificity": None}


def test_retest_without_repeated_pairs_is_empty_not_an_error():
    first = pd.DataFrame({"item": ["a"], "rater": ["x"], "score": [3]})
    second = pd.DataFrame({"item": ["b"], "rater": ["x"], "score": [3]})
    res = retest_agreement(first, second, "ordinal", VALUES)
    assert res.n_pairs == 0 and res.per_rater == {}
    assert (res.exact, res.within1, res.alpha, res.qwk) == (None, None, None, None)

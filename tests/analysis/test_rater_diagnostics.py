"""Per-rater diagnostics, test–retest on repeated items, and binary-dimension checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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


def retest_agreement_on_repeated_pairs():
    first = pd.DataFrame({"item": ["a", "b", "c", "d", "a", "b"],
                          "rater": ["x", "x", "x", "x", "y", "y"],
                          "score": [1, 2, 3, 4, 5, 5]})
    second = pd.DataFrame({"item": ["a", "b", "c", "d", "a", "b"],
                           "rater": ["x", "x", "x", "x", "y", "y"],
                           "score": [1, 2, 4, 4, 5, 3]})
    res = retest_agreement(first, second, "ordinal", VALUES)
    assert res.n_pairs == 6
    assert res.exact == pytest.approx(4 / 6) and res.within1 == pytest.approx(5 / 6)
    assert res.per_rater["x"] == {"n": 4, "exact": 0.75, "within1": 1.0}
    assert res.per_rater["y"] == {"n": 2, "exact": 0.5, "within1": 0.5}
    assert 0 < res.alpha < 1 and 0 < res.qwk < 1


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

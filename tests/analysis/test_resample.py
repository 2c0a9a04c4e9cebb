"""The resampling helpers behind the calibration comparison's intervals and p-values
(analysis/resample.py), each against a value worked by hand or the `krippendorff` package."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from analysis.resample import (
    item_bootstrap_sums,
    item_weights,
    percentile_ci,
    two_sided_p,
    weighted_alpha,
)


def test_item_weights_shapes_and_draw_counts():
    assert item_weights(7, 0, seed=1).shape == (0, 7)  # no resample: an empty table
    one = item_weights(7, 1, seed=1)  # a single resample is drawn, not refused
    assert one.shape == (1, 7) and one.sum() == 7 and one.dtype == float
    many = item_weights(5, 450, seed=3)  # more than one chunk of 200
    assert many.shape == (450, 5) and np.all(many.sum(axis=1) == 5)
    # the same resamples as the chunked sums, row by row
    per_item = np.arange(10.0).reshape(5, 2)
    assert np.array_equal(item_bootstrap_sums(per_item, 450, seed=3), many @ per_item)
    # each item is drawn with probability 1/5 per draw: mean count 1 (450 x 5 draws, SE 0.02)
    assert many.mean(axis=0) == pytest.approx(np.ones(5), abs=0.1)


def test_two_sided_p_counts_both_tails_with_the_plus_one():
    # nine resamples above 0: k = min(#<=0, #>=0) = 0 -> 2 (0 + 1) / (9 + 1) = 0.2
    assert two_sided_p(np.ones(9)) == pytest.approx(0.2)
    assert two_sided_p(-np.ones(9)) == pytest.approx(0.2)
    # one of nine at exactly 0 counts in the lower tail: k = 1 -> 2 (1 + 1) / 10 = 0.4
    assert two_sided_p(np.array([0.0] + [1.0] * 8)) == pytest.approx(0.4)
    assert two_sided_p(np.array([0.0] + [-1.0] * 8)) == pytest.approx(0.4)
    # balanced: capped at 1; every resample 0: 1; none finite: no p-value
    assert two_sided_p(np.array([-1.0, 1.0, -2.0, 2.0])) == 1.0
    assert two_sided_p(np.zeros(5)) == 1.0
    assert two_sided_p(np.array([np.nan, np.inf])) is None


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_weighted_alpha_is_alpha_of_the_units_repeated(level):
    # a row of weights counts how often each unit is drawn: alpha of the matrix with each
    # unit repeated that often (krippendorff package), with missing ratings and a scale whose
    # 1 and 5 nobody used
    m = np.array([[2, 2, np.nan], [3, 4, 3], [4, 4, 4], [2, 3, np.nan], [3, 3, 2],
                  [np.nan, 4, 2]], float)
    w = np.array([[1, 1, 1, 1, 1, 1], [2, 0, 1, 3, 0, 0], [0, 3, 0, 1, 1, 1.0]])
    got = weighted_alpha(w, m, level, [1, 2, 3, 4, 5])
    want = [krippendorff.alpha(reliability_data=np.repeat(m, row.astype(int), axis=0).T,
                               level_of_measurement=level, value_domain=[1, 2, 3, 4, 5])
            for row in w]
    assert got == pytest.approx(want, abs=1e-12)


def test_percentile_ci_by_hand():
    # numpy's default (linear) quantiles of 0..100 at 2.5% and 97.5% are 2.5 and 97.5
    assert percentile_ci(np.arange(101.0)) == pytest.approx((2.5, 97.5))
    assert percentile_ci(np.arange(101.0), 0.9) == pytest.approx((5.0, 95.0))
    # two finite resamples are enough: 0 + 0.025 * (1 - 0), 0 + 0.975 * (1 - 0)
    assert percentile_ci(np.array([0.0, 1.0, np.nan])) == pytest.approx((0.025, 0.975))
    assert percentile_ci(np.array([1.0, np.nan])) == (None, None)

"""Percent agreement, the multi-rater coefficients, Cohen's kappa and its pairwise mean at their
edges, each value worked by hand in a comment (the published values are pinned in
test_published.py; these are the cases a wrong branch or a wrong bound would change)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.chance import cohen_kappa, multi_rater, pairwise_cohen, percent_agreement
from analysis.layout import Ratings

nan = np.nan


def _r(rows) -> Ratings:
    m = np.array(rows, float)
    return Ratings(m, tuple(range(m.shape[0])), tuple(f"r{j}" for j in range(m.shape[1])))


def test_percent_agreement_by_hand():
    # ordered pairs within each item with two or more ratings (item 5 has one: left out)
    #   [1, 1, 2]:  exact 2 of 6 pairs = 1/3;  within one 6 of 6 = 1
    #   [1, 3]:     exact 0;                   within one 0 (|1 - 3| = 2)
    #   [4, 4]:     exact 1;                   within one 1
    #   [2, 5, 3]:  exact 0;                   within one 2 of 6 (2-3 both ways) = 1/3
    # exact = (1/3 + 0 + 1 + 0) / 4 = 1/3; within one = (1 + 0 + 1 + 1/3) / 4 = 7/12
    r = _r([[1, 1, 2], [1, 3, nan], [4, 4, nan], [2, 5, 3], [5, nan, nan]])
    exact, within = percent_agreement(r, [1, 2, 3, 4, 5])
    assert exact == pytest.approx(1 / 3, abs=1e-12)
    assert within == pytest.approx(7 / 12, abs=1e-12)
    # "within one" is in score values: on a 0/2/4 scale a step of 2 is not within one
    exact, within = percent_agreement(_r([[0, 2], [2, 2]]), [0, 2, 4])
    assert (exact, within) == (0.5, 0.5)
    # no item with two ratings: neither is defined
    assert all(math.isnan(x) for x in percent_agreement(_r([[1, nan], [nan, 2]]), [1, 2]))


def test_multi_rater_by_hand_at_its_edges():
    # two items on a two-value scale, [1, 1] and [1, 2]: pa = (1 + 0) / 2 = 0.5;
    # pi = mean([1, 0], [.5, .5]) = [.75, .25]
    #   Fleiss: pe = .75^2 + .25^2 = .625 -> (.5 - .625) / .375 = -1/3
    #   Gwet:   pe = 2 / (2 * 1) * (.75 * .25 + .25 * .75) = .375 -> (.5 - .375) / .625 = 0.2
    #   Brennan-Prediger: pe = 2 / 2^2 = .5 -> 0
    res = multi_rater(np.array([[2.0, 0], [1, 1]]))
    assert (res.percent_agreement, res.fleiss_kappa, res.gwet, res.brennan_prediger) == \
        pytest.approx((0.5, -1 / 3, 0.2, 0.0), abs=1e-12)
    # one pairable item is enough: [1, 2] alone: pa 0, pi [.5, .5], every pe .5 -> -1
    res = multi_rater(np.array([[1.0, 1]]))
    assert (res.percent_agreement, res.fleiss_kappa, res.gwet, res.brennan_prediger) == \
        (0.0, -1.0, -1.0, -1.0)
    # everyone gives the same value: Fleiss' pe = 1 (undefined); Gwet pe = 0 -> 1; BP 1
    res = multi_rater(np.array([[2.0, 0], [3, 0]]))
    assert math.isnan(res.fleiss_kappa)
    assert (res.percent_agreement, res.gwet, res.brennan_prediger) == (1.0, 1.0, 1.0)
    # nothing pairable, or a one-value scale: nothing is defined
    for counts in (np.array([[1.0, 0], [0, 1]]), np.array([[2.0], [3.0]])):
        res = multi_rater(counts)
        assert all(math.isnan(x) for x in (res.percent_agreement, res.fleiss_kappa,
                                          res.gwet, res.brennan_prediger))


def test_multi_rater_weights_by_value_distance_when_values_are_given():
    # one item rated 1 and 2 on the scale 1, 2, 4, linear weights:
    #   by value: w_12 = 1 - |1 - 2| / (4 - 1) = 2/3; by position: 1 - 1/2 = 1/2
    #   pa = sum_k c_k (sum_l w_kl c_l - 1) / (r (r - 1)) = 2 * (1 + w_12 - 1) / 2 = w_12
    counts = np.array([[1.0, 1, 0]])
    assert multi_rater(counts, "linear", [1, 2, 4]).percent_agreement == pytest.approx(2 / 3)
    assert multi_rater(counts, "linear").percent_agreement == pytest.approx(1 / 2)


def test_cohen_kappa_drops_items_either_rater_left_out_and_checks_the_scale():
    # items 2 and 3 miss one score each: kappa of [1, 2, 3] with [1, 2, 2]:
    #   obs: (1,1) (2,2) (3,2) each 1/3; margins a = [1/3, 1/3, 1/3], b = [1/3, 2/3, 0]
    #   pe = 1/9 + 2/9 + 0 = 1/3; po = 2/3 -> (2/3 - 1/3) / (2/3) = 0.5
    a = np.array([1, nan, 2, 2, 3])
    b = np.array([1, 3, nan, 2, 2])
    assert cohen_kappa(a, b, [1, 2, 3]) == pytest.approx(0.5, abs=1e-12)
    assert math.isnan(cohen_kappa(np.array([nan]), np.array([1.0]), [1, 2, 3]))
    assert math.isnan(cohen_kappa(np.array([]), np.array([]), [1, 2, 3]))
    for x, y in (([1, 2.5], [1, 2]), ([1, 2], [1, 2.5]), ([1, 4], [1, 2]), ([1, 2], [4, 1]),
                 ([0, 2], [1, 2]), ([1, 2], [1, 0])):
        with pytest.raises(ValueError, match="not on the scale"):
            cohen_kappa(np.array(x, float), np.array(y, float), [1, 2, 3])


def test_pairwise_cohen_counts_pairs_by_what_they_share():
    # r0-r1 share items 0-2 (kappa of [1, 2, 3] with [1, 2, 2] = 0.5, see above);
    # r0-r2 share items 3 and 4, exactly the default minimum, [1, 2] with [2, 1]: po 0,
    #   pe = 2 * 1/4 = 1/2 -> kappa -1; r1-r2 share no item: not a pair at all;
    # weighted by shared items: (3 * 0.5 + 2 * -1) / 5 = -0.1
    r = _r([[1, 1, nan], [2, 2, nan], [3, 2, nan], [1, nan, 2], [2, nan, 1], [nan, 3, nan]])
    pk = pairwise_cohen(r, [1, 2, 3], "unweighted")
    assert (pk.pairs_used, pk.pairs_too_few, pk.pairs_undefined, pk.min_items) == (2, 0, 0, 2)
    assert pk.value == pytest.approx((3 * 0.5 + 2 * -1) / 5, abs=1e-12) and pk.items == 5
    # with a minimum of 3 shared items the second pair is too few
    pk = pairwise_cohen(r, [1, 2, 3], "unweighted", min_common=3)
    assert (pk.pairs_used, pk.pairs_too_few, pk.value) == (1, 1, pytest.approx(0.5))


def test_alpha_defaults_to_ordinal_and_is_undefined_without_ratings():
    from analysis.alpha import alpha, alpha_from_matrix

    # Krippendorff (2011)'s 4 observers x 12 units: ordinal 0.815, interval 0.849 (the
    # doctest of alpha_from_matrix); called without a level, alpha is the ordinal one
    obs = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]).T
    assert round(alpha_from_matrix(obs), 3) == 0.815
    assert round(alpha_from_matrix(obs, "interval"), 3) == 0.849
    assert round(alpha(_r(obs)), 3) == 0.815
    assert math.isnan(alpha_from_matrix(np.full((3, 2), nan)))
    assert math.isnan(alpha(_r(np.full((3, 2), nan)), "interval", [1, 2, 3]))


def test_ratio_alpha_against_the_krippendorff_package_with_zeros():
    # ratio distance ((c - k) / (c + k))^2, 0 where c + k = 0 (two zeros agree)
    import krippendorff

    from analysis.alpha import alpha_from_matrix

    obs = np.array([[0, 0, 1], [0, 2, 2], [4, 3, nan], [1, 1, 0], [3, 4, 4], [0, 0, nan],
                    [2, nan, 1]], float)
    want = krippendorff.alpha(reliability_data=obs.T, level_of_measurement="ratio",
                              value_domain=[0, 1, 2, 3, 4])
    assert alpha_from_matrix(obs, "ratio", [0, 1, 2, 3, 4]) == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="level must be"):
        alpha_from_matrix(obs, "ordinl")  # type: ignore[arg-type]

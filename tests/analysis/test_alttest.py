"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025) on data made here: a
tiny case worked by hand, and a larger generated case against a second, plain implementation
written from the paper's description. (The authors' released data carries no licence, so it is
not in the repository; the figures they print for it are kept in docs/analysis.md.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from analysis.alttest import alt_test


def t3_cdf(t: float) -> float:
    """Student's t with 3 degrees of freedom, closed form:
    F(t) = 1/2 + (1/pi) [ t / (sqrt(3) (1 + t^2/3)) + arctan(t / sqrt(3)) ]."""
    return 0.5 + (t / (math.sqrt(3) * (1 + t * t / 3)) + math.atan(t / math.sqrt(3))) / math.pi


def test_tiny_case_by_hand():
    #        A  B  C   judge
    # i1     1  1  1   1
    # i2     2  1  1   1      A differs
    # i3     1  2  1   1      B differs
    # i4     1  1  2   1      C differs
    # Leaving A out (others B, C), accuracy scores judge / A per item:
    #   i1 1 / 1 (tie), i2 1 / 0 (judge), i3 .5 / .5 (tie), i4 .5 / .5 (tie)
    #   W_f = 1 1 1 1, W_h = 1 0 1 1, d = W_h - W_f = 0 -1 0 0: mean -.25, SD .5, n 4
    #   t = (-.25 - .2) / (.5 / 2) = -1.8, one-sided p = F_3(-1.8) = 0.08484...
    # B and C are the same by symmetry. Benjamini–Yekutieli over 3 equal p-values:
    #   p (3 · (1 + 1/2 + 1/3)) / 3 = p · 11/6 = 0.1555 > .05 → nothing rejected, omega = 0;
    #   rho = mean W_f = 1.
    m = np.array([[1, 1, 1], [2, 1, 1], [1, 2, 1], [1, 1, 2]], float)
    judge = np.array([1, 1, 1, 1], float)
    res = alt_test(m, judge, scoring="accuracy", epsilon=0.2, min_items=4,
                   human_names=("A", "B", "C"))
    p = t3_cdf(-1.8)
    assert p == pytest.approx(0.084840, abs=1e-6)
    assert res.p_values == {"A": pytest.approx(p, abs=1e-12), "B": pytest.approx(p, abs=1e-12),
                            "C": pytest.approx(p, abs=1e-12)}
    assert p * 11 / 6 > 0.05
    assert res.rejected == {"A": False, "B": False, "C": False}
    assert (res.winning_rate, res.advantage_prob, res.passed) == (0.0, 1.0, False)
    assert (res.humans_tested, res.items_used) == (3, 4)
    # epsilon = .4: t = (-.25 - .4) / .25 = -2.6, p = F_3(-2.6) = 0.04019 < .05 for each human,
    # but BY makes it 0.0737: omega stays 0 (a test without the correction would pass)
    res = alt_test(m, judge, scoring="accuracy", epsilon=0.4, min_items=4)
    assert res.p_values["1"] == pytest.approx(t3_cdf(-2.6), abs=1e-12)
    assert t3_cdf(-2.6) < 0.05 < t3_cdf(-2.6) * 11 / 6
    assert (res.winning_rate, res.passed) == (0.0, False)
    # epsilon = .6: t = (-.25 - .6) / .25 = -3.4, p = F_3(-3.4) = 0.02123; BY: 0.0389 < .05
    res = alt_test(m, judge, scoring="accuracy", epsilon=0.6, min_items=4)
    assert res.p_values["0"] == pytest.approx(t3_cdf(-3.4), abs=1e-12)
    assert t3_cdf(-3.4) * 11 / 6 < 0.05
    assert (res.winning_rate, res.passed) == (1.0, True)


def _reference(humans, judge, scoring, epsilon, q=0.05, min_items=30):
    """The test as the paper describes it, with loops and lists."""
    n_items, n_h = humans.shape
    usable = [i for i in range(n_items) if not math.isnan(judge[i])
              and sum(not math.isnan(v) for v in humans[i]) >= 2]
    p_values, rho = {}, []
    for j in range(n_h):
        d, wins = [], []
        for i in usable:
            if math.isnan(humans[i, j]):
                continue
            others = [humans[i, k] for k in range(n_h) if k != j and not math.isnan(humans[i, k])]

            def score(label, others=others):
                if scoring == "accuracy":
                    return sum(label == o for o in others) / len(others)
                return -math.sqrt(sum((label - o) ** 2 for o in others) / len(others))

            sj, sh = score(judge[i]), score(humans[i, j])
            w_f, w_h = float(sj >= sh), float(sh >= sj)
            d.append(w_h - w_f)
            wins.append(w_f)
        if len(d) < min_items:
            continue
        n = len(d)
        mean = sum(d) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
        t = (mean - epsilon) / (sd / math.sqrt(n))
        p_values[j] = float(stats.t.cdf(t, n - 1))
        rho.append(sum(wins) / n)
    # Benjamini–Yekutieli step-up: adjusted p_(i) = min_{k >= i} p_(k) m c(m) / k
    m = len(p_values)
    c = sum(1 / k for k in range(1, m + 1))
    order = sorted(p_values, key=p_values.get)
    adj, running = {}, 1.0
    for rank in range(m, 0, -1):
        j = order[rank - 1]
        running = min(running, p_values[j] * m * c / rank)
        adj[j] = running
    omega = sum(adj[j] <= q for j in adj) / m
    return p_values, omega, sum(rho) / len(rho)


@pytest.mark.parametrize("scoring,epsilon,seed", [("accuracy", 0.2, 1), ("neg_rmse", 0.15, 2),
                                                  ("neg_rmse", 0.1, 3)])
def test_a_generated_case_against_a_second_implementation(scoring, epsilon, seed):
    rng = np.random.default_rng(seed)
    n_items = 150
    truth = rng.integers(1, 6, n_items).astype(float)
    noise = [0.2, 0.3, 0.35, 0.5, 0.6]
    humans = np.column_stack([np.where(rng.random(n_items) < p,
                                       np.clip(truth + rng.choice([-1, 1], n_items), 1, 5),
                                       truth) for p in noise])
    humans[rng.random(humans.shape) < 0.25] = np.nan
    humans[:20, 4] = np.nan  # an unbalanced design
    judge = np.where(rng.random(n_items) < 0.3, np.clip(truth + 1, 1, 5), truth)
    judge[:3] = np.nan
    res = alt_test(humans, judge, scoring=scoring, epsilon=epsilon)
    p, omega, rho = _reference(humans, judge, scoring, epsilon)
    assert res.humans_tested == len(p) == 5
    assert [res.p_values[str(j)] for j in range(5)] == pytest.approx([p[j] for j in range(5)],
                                                                     abs=1e-12)
    assert res.winning_rate == pytest.approx(omega, abs=1e-12)
    assert res.advantage_prob == pytest.approx(rho, abs=1e-12)
    assert res.passed == (omega >= 0.5)
    # the cases differ in outcome, so a wrong sign or a missing correction would show
    assert 0 < sum(v < 0.05 for v in p.values())


def test_the_generated_cases_pass_and_fail():
    outcomes = set()
    for scoring, epsilon, seed in (("accuracy", 0.2, 1), ("neg_rmse", 0.15, 2),
                                   ("neg_rmse", 0.1, 3), ("neg_rmse", 0.0, 3)):
        rng = np.random.default_rng(seed)
        truth = rng.integers(1, 6, 150).astype(float)
        humans = np.column_stack([np.where(rng.random(150) < p, np.clip(
            truth + rng.choice([-1, 1], 150), 1, 5), truth) for p in (.2, .3, .35, .5, .6)])
        judge = np.where(rng.random(150) < 0.3, np.clip(truth + 1, 1, 5), truth)
        outcomes.add(alt_test(humans, judge, scoring=scoring, epsilon=epsilon).passed)
    assert outcomes == {True, False}


def test_humans_with_too_few_items_are_skipped_and_named_in_notes():
    m = np.array([[1, 1, np.nan]] * 40 + [[1, 2, 1]] * 5, float)
    res = alt_test(m, np.ones(45), scoring="accuracy", epsilon=0.2)
    assert (res.humans_tested, res.humans_skipped) == (2, 1)
    assert any("1 humans skipped (fewer than 30 items)" in n for n in res.notes)


def test_defaults_are_neg_rmse_at_epsilon_two_tenths():
    """The tiny case above with neither scoring nor epsilon given: neg_rmse (the default) ties
    and wins on the same items as accuracy there (leaving A out: i2 the judge's -0 beats A's
    -1, the rest tie), so p = F_3((-.25 - .2) / .25) = F_3(-1.8); an epsilon of 1.2 would give
    F_3(-5.8) = 0.0051."""
    m = np.array([[1, 1, 1], [2, 1, 1], [1, 2, 1], [1, 1, 2]], float)
    res = alt_test(m, np.ones(4), min_items=4)
    assert (res.scoring, res.epsilon) == ("neg_rmse", 0.2)
    assert res.p_values["0"] == pytest.approx(t3_cdf(-1.8), abs=1e-12)


def _blocks(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Humans E, A, B, C, D, F (columns in that order) and the judge, accuracy scoring.

    n items rated by A and C (A = C = 1, judge 2): A and C each beat the judge on every item,
    W_h - W_f = 1 throughout; n items rated by B and D (B = 1, D = 2, judge 2): against D the
    judge beats B (difference -1), against B the judge and D tie (difference 0). One item
    rated by E and F alike and the judge (ties). Dropped: an item only A rated, an item B and
    D rated without a judge label (2 dropped); an item nobody rated is not counted."""
    nan = np.nan
    rows = [[nan, 1, nan, 1, nan, nan]] * n + [[nan, nan, 1, nan, 2, nan]] * n
    judge = [2.0] * n + [2.0] * n
    rows += [[3, nan, nan, nan, nan, 3], [nan, 1, nan, nan, nan, nan],
             [nan, nan, 1, nan, 1, nan], [nan] * 6]
    judge += [3.0, 1.0, nan, 1.0]
    return np.array(rows, float), np.array(judge)


def test_constant_differences_decide_p_and_omega_half_passes():
    """Every human's differences are constant, so p is 0 (constant below epsilon) or 1 (at or
    above): A and C at +1 get 1, B at -1 and D at 0 get 0. Benjamini–Yekutieli over
    (1, 0, 1, 0) rejects the two zeros: omega = 2/4 = 0.5, which passes (omega >= 0.5, Calderon
    et al. 2025); rho = mean(W_f) over tested humans = (0 + 1 + 0 + 1) / 4. E and F, with one
    item each, are skipped (30-item rule lowered to 3 here), E before the others."""
    m, judge = _blocks(3)
    res = alt_test(m, judge, scoring="accuracy", epsilon=0.2, min_items=3,
                   human_names=tuple("EABCDF"))
    assert res.p_values == {"A": 1.0, "B": 0.0, "C": 1.0, "D": 0.0}
    assert res.rejected == {"A": False, "B": True, "C": False, "D": True}
    assert (res.winning_rate, res.advantage_prob, res.passed) == (0.5, 0.5, True)
    assert (res.humans_tested, res.humans_skipped, res.items_used, res.items_dropped) == \
        (4, 2, 7, 2)
    # at epsilon 0, D's constant 0 is not below it: p = 1, and only B is rejected
    res = alt_test(m, judge, scoring="accuracy", epsilon=0.0, min_items=3,
                   human_names=tuple("EABCDF"))
    assert res.p_values == {"A": 1.0, "B": 0.0, "C": 1.0, "D": 1.0}
    assert (res.winning_rate, res.passed) == (0.25, False)
    # one item per human (minimum 1): the same rule on a single difference; E and F tie
    m1, judge1 = _blocks(1)
    res = alt_test(m1, judge1, scoring="accuracy", min_items=1, human_names=tuple("EABCDF"))
    assert res.p_values == {"E": 0.0, "A": 1.0, "B": 0.0, "C": 1.0, "D": 0.0, "F": 0.0}


def test_the_record_when_no_human_has_enough_items():
    m, judge = _blocks(3)
    res = alt_test(m, judge, scoring="accuracy", epsilon=0.15, min_items=30)
    assert res.as_dict() == {"epsilon": 0.15, "scoring": "accuracy", "winning_rate": None,
                             "advantage_prob": None, "passed": None, "humans_tested": 0,
                             "humans_skipped": 6, "items_used": 7, "items_dropped": 2}
    assert res.notes[-1] == "alt-test: no human has enough items; the test cannot be run"
    tested = alt_test(m, judge, scoring="accuracy", epsilon=0.2, min_items=3).as_dict()
    assert tested == {"epsilon": 0.2, "scoring": "accuracy", "winning_rate": 0.5,
                      "advantage_prob": 0.5, "passed": True, "humans_tested": 4,
                      "humans_skipped": 2, "items_used": 7, "items_dropped": 2}


def test_plain_lists_with_none_and_boolean_labels():
    """Labels as given from Python: lists with None for "not labelled" are NaN, and binary
    labels as booleans score as 0/1 (neg_rmse subtracts them)."""
    m, judge = _blocks(3)
    as_lists = alt_test([[None if np.isnan(v) else v for v in row] for row in m],
                        [None if np.isnan(v) else v for v in judge], scoring="accuracy",
                        min_items=3)
    assert as_lists.p_values == alt_test(m, judge, scoring="accuracy", min_items=3).p_values
    rng = np.random.default_rng(5)
    h = rng.random((40, 3)) < 0.5
    j = rng.random(40) < 0.5
    boolean = alt_test(h, j, scoring="neg_rmse", min_items=30)
    numeric = alt_test(h.astype(float), j.astype(float), scoring="neg_rmse", min_items=30)
    assert boolean.p_values == numeric.p_values and boolean.humans_tested == 3


def test_a_matrix_that_is_not_items_by_humans_is_refused():
    with pytest.raises(ValueError, match="items × humans"):
        alt_test(np.ones(4), np.ones(4))

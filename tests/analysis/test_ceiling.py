"""The pooled leave-one-out human ceiling and the paired judge − ceiling bootstrap: a tiny case
worked by hand, identities with Cohen's kappa, and a second, straightforward implementation of
the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.ceiling import (
    compare_with_ceiling,
    human_ceiling,
    loo_pairs,
    pooled_metrics,
    value_qwk,
)
from analysis.chance import cohen_kappa
from analysis.resample import item_weights

# Three items rated by humans A, B, C; a judge J.
#        A  B  C   J
# i1     1  1  2   1
# i2     3  2  3   3
# i3     2  3  3   3
M = np.array([[1, 1, 2], [3, 2, 3], [2, 3, 3]], float)
J = np.array([1, 3, 3], float)


def test_tiny_case_by_hand():
    # Leave-one-out pairs (x, mean of the other two), row by row:
    #   i1: (1, 1.5) (1, 1.5) (2, 1)   i2: (3, 2.5) (2, 3) (3, 2.5)   i3: (2, 3) (3, 2.5) (3, 2.5)
    # Humans: mean (x - c)^2 = 4.5 / 9 = 0.5; means both 20/9; var x = 50/81, var c = 36.5/81
    #   QWK = 1 - 0.5 / (86.5 / 81) = 92/173 = 0.53179...
    # Judge on the same pairs, x = J(item) = 1,1,1,3,3,3,3,3,3: mean (J - c)^2 = 1.5 / 9 = 1/6;
    #   mean J = 7/3, var J = 72/81, (7/3 - 20/9)^2 = 1/81
    #   QWK = 1 - (1/6) / (109.5 / 81) = 64/73 = 0.87671...
    pairs = loo_pairs(M)
    assert pairs.n_pairs == 9 and pairs.n_items == 3
    assert sorted(zip(pairs.x.tolist(), pairs.c.tolist(), strict=True)) == sorted(
        [(1, 1.5), (1, 1.5), (2, 1), (3, 2.5), (2, 3), (3, 2.5), (2, 3), (3, 2.5), (3, 2.5)])
    h = pooled_metrics(pairs)
    j = pooled_metrics(pairs, J)
    assert h["qwk"] == pytest.approx(92 / 173, abs=1e-12)
    assert j["qwk"] == pytest.approx(64 / 73, abs=1e-12)
    # |x - c| sums 6 (humans) and 3 (judge) over 9 pairs; bias 0 and (21 - 20) / 9
    assert h["mae"] == pytest.approx(2 / 3) and j["mae"] == pytest.approx(1 / 3)
    assert h["bias"] == pytest.approx(0.0, abs=1e-12) and j["bias"] == pytest.approx(1 / 9)
    # exact: per pair, the share of the *other* humans matched exactly —
    #   humans: i1 .5 .5 0, i2 .5 0 .5, i3 0 .5 .5 → 3/9; judge: i1 .5 .5 1, i2 .5 1 .5,
    #   i3 1 .5 .5 → 6/9; within one unit every pair matches all others except none here
    assert h["exact"] == pytest.approx(1 / 3) and j["exact"] == pytest.approx(2 / 3)
    assert h["within1"] == pytest.approx(1.0) and j["within1"] == pytest.approx(1.0)
    cmp = compare_with_ceiling(pairs, J, B=0, seed=0)
    assert cmp.diff.value == pytest.approx(64 / 73 - 92 / 173, abs=1e-12)
    assert (cmp.n_items, cmp.n_pairs) == (3, 9)


def test_the_plausible_wrong_variants_give_other_numbers():
    pairs = loo_pairs(M)
    # 1. the all-raters mean as the yardstick (the human compared with a mean that includes
    #    themself) flatters the humans
    allmean = np.repeat(M.mean(axis=1), 3)
    assert value_qwk(M.ravel(), allmean) > 0.75
    # 2. the unweighted mean of per-human QWKs
    per_human = [value_qwk(pairs.x[pairs.human == h], pairs.c[pairs.human == h])
                 for h in range(3)]
    assert np.mean(per_human) == pytest.approx(4 / 7)  # each human's own QWK is 4/7
    assert abs(4 / 7 - 92 / 173) > 0.03
    # 3. the mean of pairwise Cohen's quadratic kappas between humans
    pw = [cohen_kappa(M[:, a], M[:, b], [1, 2, 3], "quadratic")
          for a, b in ((0, 1), (0, 2), (1, 2))]
    assert np.mean(pw) == pytest.approx(0.5)  # every pair's quadratic kappa is 0.5 here
    assert abs(0.5 - 92 / 173) > 0.03


@pytest.mark.parametrize("seed", range(5))
def test_value_qwk_is_cohens_quadratic_kappa_on_an_even_scale(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, 60).astype(float)
    b = np.clip(a + rng.integers(-2, 3, 60), 1, 5)
    a[:2], b[:2] = [1, 5], [5, 1]  # both ends used, so the positional scale is 1..5
    assert value_qwk(a, b) == pytest.approx(cohen_kappa(a, b, [1, 2, 3, 4, 5], "quadratic"),
                                            abs=1e-12)


def test_value_weights_on_an_uneven_scale():
    # Scale 1, 2, 6: by position 6 is next to 2; by value it is 4 units away. Two raters on
    # (1, 2), (2, 6), (6, 6): value-weighted Cohen's kappa equals value_qwk.
    a, b = np.array([1.0, 2.0, 6.0]), np.array([2.0, 6.0, 6.0])
    by_value = cohen_kappa(a, b, [1, 2, 6], "quadratic", on="value")
    assert by_value == pytest.approx(value_qwk(a, b), abs=1e-12)
    # by position: (1,2) one step, (2,6) one step of 2 → a different number (0.5)
    assert cohen_kappa(a, b, [1, 2, 6], "quadratic") == pytest.approx(0.5)
    assert abs(by_value - 0.5) > 0.01


def test_a_human_with_too_few_items_is_left_out_everywhere():
    d = np.full((3, 1), np.nan)
    d[0, 0] = 3.0  # human D rated one item, which others rated too
    with_d = np.hstack([M, d])
    pairs = loo_pairs(with_d, min_shared_items=2)
    assert pairs.left_out == (3,)
    assert pooled_metrics(pairs)["qwk"] == pytest.approx(92 / 173, abs=1e-12)
    # with the minimum at 1, D counts as a rater and in A, B, C's consensus on i1
    assert pooled_metrics(loo_pairs(with_d))["qwk"] != pytest.approx(92 / 173, abs=1e-3)
    res = human_ceiling(with_d, min_shared_items=2)
    assert res["left_out"] == [3] and res["n_humans"] == 3


def _slow_boot(m: np.ndarray, judge: np.ndarray, B: int, seed: int):
    """The bootstrap written out: draw (with replacement) from the items that enter the
    comparison, repeat each drawn item's pairs, compute both QWKs."""
    pairs = loo_pairs(m)
    used = np.unique(pairs.item)
    w = item_weights(used.size, B, seed)
    pos = np.searchsorted(used, pairs.item)
    out = []
    for b in range(B):
        reps = w[b][pos].astype(int)
        x, c = np.repeat(pairs.x, reps), np.repeat(pairs.c, reps)
        jx = np.repeat(judge[pairs.item], reps)
        out.append((value_qwk(jx, c), value_qwk(x, c)))
    return np.array(out)


def test_paired_bootstrap_matches_a_straightforward_implementation():
    rng = np.random.default_rng(8)
    n, k = 40, 4
    latent = rng.normal(3, 1, n)
    m = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.8, (n, k))), 1, 5)
    m[rng.random(m.shape) < 0.3] = np.nan
    judge = np.clip(np.rint(latent + rng.normal(0, 0.5, n)), 1, 5)
    B, seed = 200, 17
    cmp = compare_with_ceiling(loo_pairs(m), judge, B=B, seed=seed)
    slow = _slow_boot(m, judge, B, seed)
    diffs = slow[:, 0] - slow[:, 1]
    lo, hi = np.quantile(diffs, [0.025, 0.975])
    assert (cmp.diff.low, cmp.diff.high) == (pytest.approx(lo, abs=1e-12),
                                             pytest.approx(hi, abs=1e-12))
    assert cmp.diff_sd == pytest.approx(np.std(diffs, ddof=1), abs=1e-12)
    jl, jh = np.quantile(slow[:, 0], [0.025, 0.975])
    assert (cmp.judge.low, cmp.judge.high) == (pytest.approx(jl), pytest.approx(jh))
    # paired: the difference varies far less than the two QWKs drawn independently would
    independent = np.sqrt(np.var(slow[:, 0], ddof=1) + np.var(slow[:, 1], ddof=1))
    assert cmp.diff_sd < 0.8 * independent


def test_human_ceiling_ci_comes_from_the_item_bootstrap():
    rng = np.random.default_rng(3)
    m = np.clip(np.rint(rng.normal(3, 1, 80)[:, None] + rng.normal(0, 0.7, (80, 3))), 1, 5)
    res = human_ceiling(m, B=300, seed=5)
    assert res["qwk_ci"]["low"] < res["qwk"] < res["qwk_ci"]["high"]
    assert res["mae_ci"]["low"] < res["mae"] < res["mae_ci"]["high"]
    assert human_ceiling(m, B=0)["qwk_ci"] == {"low": None, "high": None}

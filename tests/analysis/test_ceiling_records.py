"""The judge − ceiling comparison and the human ceiling as records: every field, at a coverage
other than the default, against the leave-one-out pairs and the item resamples written out
(pairs built by hand here, QWK as Lin's concordance, 1 − mean (x − c)² / (var x + var c +
(mean x − mean c)²)); and the edges: one pair, no pair, two items, resamples without a value."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.ceiling import (
    _linear_kappa,
    compare_with_ceiling,
    human_ceiling,
    loo_pairs,
    value_qwk,
)
from analysis.resample import item_weights


def _ccc(x, c) -> float:
    x, c = np.asarray(x, float), np.asarray(c, float)
    den = x.var() + c.var() + (x.mean() - c.mean()) ** 2
    return 1 - np.mean((x - c) ** 2) / den if den > 1e-12 else np.nan


def _pairs_by_hand(m, rows=None):
    """(item, x, c) of every rating of an item two or more humans rated, c the mean of the
    other humans' ratings of the item."""
    out = []
    for i, row in enumerate(m):
        if rows is not None and not rows[i]:
            continue
        rated = [h for h in range(len(row)) if not np.isnan(row[h])]
        if len(rated) < 2:
            continue
        for h in rated:
            others = [row[g] for g in rated if g != h]
            out.append((i, row[h], sum(others) / len(others)))
    return [np.array(v) for v in zip(*out, strict=True)]


def _study(seed=8, n=30, k=4):
    rng = np.random.default_rng(seed)
    latent = rng.normal(3, 1, n)
    m = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.8, (n, k))), 1, 5)
    m[rng.random(m.shape) < 0.3] = np.nan
    judge = np.clip(np.rint(latent + rng.normal(0, 0.5, n)), 1, 5)
    judge[[2, 7]] = np.nan
    return m, judge


def test_subset_keeps_every_field():
    m, _ = _study()
    pairs = loo_pairs(m)
    keep = pairs.item % 2 == 0
    sub = pairs.subset(keep)
    for f in ("item", "human", "x", "c"):
        assert getattr(sub, f).tolist() == getattr(pairs, f)[keep].tolist(), f
    assert sub.matrix is pairs.matrix and sub.kept is pairs.kept
    assert sub.left_out == pairs.left_out


def test_one_pair_no_pair_and_a_small_expected_disagreement():
    """One pair (1, 3): QWK and linear kappa are 1 − 4/4 = 0 and 1 − 2/2 = 0, not undefined;
    no pair: undefined. x = (1, 2) against y = (1, 2): linear kappa's expected disagreement
    is (0 + 1 + 1 + 0) / 4 = 0.5 (below 1), observed 0, so 1."""
    assert value_qwk(np.array([1.0]), np.array([3.0])) == 0.0
    assert _linear_kappa(np.array([1.0]), np.array([3.0])) == 0.0
    assert np.isnan(value_qwk(np.array([]), np.array([])))
    assert np.isnan(_linear_kappa(np.array([]), np.array([])))
    assert _linear_kappa(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 1.0


def test_the_comparison_record_at_ninety_percent_against_the_resamples_written_out():
    m, judge = _study()
    rows = ~np.isnan(judge)
    item, x, c = _pairs_by_hand(m, rows)
    used = np.unique(item)
    cmp = compare_with_ceiling(loo_pairs(m), [None if np.isnan(v) else v for v in judge],
                               B=150, seed=9, ci=0.9)
    j_val, c_val = _ccc(judge[item], c), _ccc(x, c)
    qj, qc = [], []
    for w in item_weights(used.size, 150, 9):
        idx = np.concatenate([np.flatnonzero(item == i) for i, k in zip(used, w, strict=True)
                              for _ in range(int(k))])
        qj.append(_ccc(judge[item[idx]], c[idx]))
        qc.append(_ccc(x[idx], c[idx]))
    qj, qc = np.array(qj), np.array(qc)
    diff = qj - qc
    assert cmp.as_dict() == {
        "judge_qwk": {"value": pytest.approx(j_val, abs=1e-12),
                      "low": pytest.approx(np.quantile(qj, 0.05), abs=1e-12),
                      "high": pytest.approx(np.quantile(qj, 0.95), abs=1e-12)},
        "ceiling_qwk": {"value": pytest.approx(c_val, abs=1e-12),
                        "low": pytest.approx(np.quantile(qc, 0.05), abs=1e-12),
                        "high": pytest.approx(np.quantile(qc, 0.95), abs=1e-12)},
        "difference": {"value": pytest.approx(j_val - c_val, abs=1e-12),
                       "low": pytest.approx(np.quantile(diff, 0.05), abs=1e-12),
                       "high": pytest.approx(np.quantile(diff, 0.95), abs=1e-12),
                       "sd": pytest.approx(np.std(diff, ddof=1), abs=1e-12)},
        "n_items": int(used.size), "n_pairs": int(item.size), "B": 150, "seed": 9}
    # without resamples: the values, no intervals, and the same counts and seed
    flat = compare_with_ceiling(loo_pairs(m), judge, B=0, seed=9)
    assert flat.as_dict() == {
        "judge_qwk": {"value": pytest.approx(j_val, abs=1e-12), "low": None, "high": None},
        "ceiling_qwk": {"value": pytest.approx(c_val, abs=1e-12), "low": None, "high": None},
        "difference": {"value": pytest.approx(j_val - c_val, abs=1e-12), "low": None,
                       "high": None, "sd": None},
        "n_items": int(used.size), "n_pairs": int(item.size), "B": 0, "seed": 9}


def test_an_undefined_qwk_and_two_items():
    """Every human gives 3 and so does the judge: QWK is 0 / 0 for both, so the difference
    is an empty interval (not None). Two items are enough for resamples: item A (3, 3; judge
    3) alone has no QWK, item B (1, 5; judge 2) does; seed 2 draws AB and AA: one
    difference, no SD; seed 0 with three resamples draws BB, AB and AA: two, and their SD."""
    same = np.full((4, 2), 3.0)
    cmp = compare_with_ceiling(loo_pairs(same), np.full(4, 3.0), B=0, seed=0)
    assert cmp.diff.value is None and cmp.diff.as_dict() == {"value": None, "low": None,
                                                             "high": None}
    m = np.array([[3.0, 3.0], [1.0, 5.0]])
    judge = np.array([3.0, 2.0])
    assert item_weights(2, 2, 2).tolist() == [[1.0, 1.0], [2.0, 0.0]]
    two = compare_with_ceiling(loo_pairs(m), judge, B=2, seed=2)
    assert two.diff_sd is None and two.diff.low is None  # one finite resample
    assert item_weights(2, 3, 0).tolist() == [[0.0, 2.0], [1.0, 1.0], [2.0, 0.0]]
    three = compare_with_ceiling(loo_pairs(m), judge, B=3, seed=0)
    # BB: humans (1, 5) against (5, 1): 1 − 16/8 = −1; judge 2 against (5, 1): 1 − 5/5 = 0
    # AB: humans x = 3 3 1 5, c = 3 3 5 1: 1 − 8/(2 + 2 + 0) = −1; judge 3 3 2 2:
    #     1 − 2.5/(0.25 + 2 + 0.25) = 0. Both differences are 1: an SD of 0, not None
    assert three.diff_sd == 0.0
    assert (three.diff.value, three.diff.low, three.diff.high) == (1.0, 1.0, 1.0)


def test_human_ceiling_defaults_coverage_and_small_variances():
    """The scores stay within one point (3 or 4), so the pooled variances are below 1: the
    CI must still come from every resample (a QWK is undefined only with no variance at
    all). Defaults: no bootstrap, seed 0, a human with a single shared item counts."""
    rng = np.random.default_rng(4)
    m = 3.0 + (rng.random((24, 3)) < 0.5)
    m[0, 2] = np.nan
    item, x, c = _pairs_by_hand(m)
    assert x.var() + c.var() < 1
    res = human_ceiling(m, B=120, seed=6, ci=0.9)
    q, a = [], []
    for w in item_weights(24, 120, 6):
        idx = np.concatenate([np.flatnonzero(item == i) for i in range(24)
                              for _ in range(int(w[i]))])
        q.append(_ccc(x[idx], c[idx]))
        a.append(np.mean(np.abs(x[idx] - c[idx])))
    assert res["qwk"] == pytest.approx(_ccc(x, c), abs=1e-12)
    assert (res["qwk_ci"]["low"], res["qwk_ci"]["high"]) == pytest.approx(
        tuple(np.quantile(q, [0.05, 0.95])), abs=1e-12)
    assert (res["mae_ci"]["low"], res["mae_ci"]["high"]) == pytest.approx(
        tuple(np.quantile(a, [0.05, 0.95])), abs=1e-12)
    assert human_ceiling(m, B=120)["qwk_ci"] == human_ceiling(m, B=120, seed=0)["qwk_ci"]
    assert human_ceiling(m)["qwk_ci"] == {"low": None, "high": None}
    # one human shares a single item with another: counted by default
    lone = np.full((5, 3), np.nan)
    lone[:, :2] = m[:5, :2]
    lone[0, 2] = 4.0
    assert human_ceiling(lone)["left_out"] == [] and human_ceiling(lone)["n_humans"] == 3
    # two items are enough for an interval
    pair = human_ceiling(np.array([[1.0, 2.0], [4.0, 5.0]]), B=50, seed=1)
    assert pair["qwk_ci"]["low"] is not None and pair["mae_ci"]["low"] is not None


def test_pooled_correlations_from_three_pairs_on_a_yes_no_scale_and_none_from_two():
    """One reply rated 0, 1, 1 by three humans: the pairs (x, mean of the others) are (0, 1),
    (1, 0.5), (1, 0.5); three pairs with values spread by at most 1 still give Pearson,
    Spearman and Kendall (scipy on those pairs). Two humans on one reply give two pairs:
    no correlation (None, each key present). Humans who all agree give no QWK (0/0): None,
    not NaN."""
    from scipy import stats

    from analysis.ceiling import loo_pairs, pooled_metrics

    three = pooled_metrics(loo_pairs(np.array([[0.0, 1.0, 1.0]])))
    x, c = np.array([0.0, 1.0, 1.0]), np.array([1.0, 0.5, 0.5])
    assert three["pearson"] == pytest.approx(stats.pearsonr(x, c).statistic)
    assert three["spearman"] == pytest.approx(stats.spearmanr(x, c).statistic)
    assert three["kendall_tau_b"] == pytest.approx(stats.kendalltau(x, c).statistic)
    assert three["n_pairs"] == 3
    two = pooled_metrics(loo_pairs(np.array([[1.0, 3.0]])))
    assert {k: two[k] for k in ("pearson", "spearman", "kendall_tau_b")} == {
        "pearson": None, "spearman": None, "kendall_tau_b": None}
    same = pooled_metrics(loo_pairs(np.array([[2.0, 2.0], [2.0, 2.0]])))
    assert same["qwk"] is None and same["linear_kappa"] is None and same["mae"] == 0.0

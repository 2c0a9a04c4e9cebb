"""Every number of the judge and human-ceiling blocks pinned on one tiny case, worked by hand or
by a reference implementation, tightly enough that the plausible wrong variant fails (Pearson
for Spearman, RMSE for MAE, Kendall's tau-c for tau-b, Bland–Altman at 1 SD, within two for
within one, the all-raters mean for the leave-one-out mean).

The case: five items rated by humans A, B, C on 1..5, and a judge J.

        A  B  C    J
    i1  1  2  2    1
    i2  2  2  4    3
    i3  3  4  5    5
    i4  4  5  5    5
    i5  5  3  4    2

Leave-one-out pairs (the human's score x, the mean c of the other two humans), item by item,
humans A, B, C:

    i1 (1, 2)   (2, 1.5) (2, 1.5)     i2 (2, 3)   (2, 3)   (4, 2)
    i3 (3, 4.5) (4, 4)   (5, 3.5)     i4 (4, 5)   (5, 4.5) (5, 4.5)
    i5 (5, 3.5) (3, 4.5) (4, 4)

The judge is paired with the same c: x = J(item) = 1 1 1 3 3 3 5 5 5 5 5 5 2 2 2.
"""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.analyze import AnalysisOptions, Scale, analyze
from analysis.ceiling import human_ceiling, loo_pairs
from analysis.judge_agreement import judge_metrics
from analysis.layout import Ratings
from tests.helpers import run_h2h

M = np.array([[1, 2, 2], [2, 2, 4], [3, 4, 5], [4, 5, 5], [5, 3, 4]], float)
J = np.array([1, 3, 5, 5, 2], float)
VALUES = [1.0, 2.0, 3.0, 4.0, 5.0]
ITEMS, HUMANS = ("i1", "i2", "i3", "i4", "i5"), ("A", "B", "C")

# the pairs above, typed from the table (not computed by the code under test)
C = np.array([2, 1.5, 1.5, 3, 3, 2, 4.5, 4, 3.5, 5, 4.5, 4.5, 3.5, 4.5, 4])
X_HUMAN = np.array([1, 2, 2, 2, 2, 4, 3, 4, 5, 4, 5, 5, 5, 3, 4], float)
X_JUDGE = np.repeat(J, 3)


def _brute_linear_kappa(x, y):
    """1 - mean |x_p - y_p| / mean over every (p, q) of |x_p - y_q|, as a double loop."""
    num = np.mean([abs(a - b) for a, b in zip(x, y, strict=True)])
    den = np.mean([abs(a - b) for a in x for b in y])
    return 1 - num / den


# The judge's numbers. Differences d = J - c:
#   -1 -.5 -.5 | 0 0 1 | .5 1 1.5 | 0 .5 .5 | -1.5 -2.5 -2
#   MAE  = sum |d| / 15 = 13 / 15;     RMSE = sqrt(sum d^2 / 15) = sqrt(19 / 15)
#   bias = sum d / 15 = -3 / 15 = -0.2 (RMSE's wrong twin, MAE, is 0.867; RMSE is 1.125)
#   QWK  = 1 - mean d^2 / (var x + var c + (mean x - mean c)^2)
#        = 1 - (19/15) / (2.56 + 1.306667 + 0.04) = 1 - 19 / 58.6 = 198 / 293
#   exact: per pair, the share of the *other* two humans whose score equals J:
#     i1 0 .5 .5, i2 0 0 0, i3 .5 .5 0, i4 1 .5 .5, i5 0 0 0  -> 4 / 15
#   within one: i1 1 1 1, i2 1 1 1, i3 1 .5 .5, i4 1 1 1, i5 .5 0 .5 -> 12 / 15
#     (within two would give 14 / 15)
# five items: every human shares them all, so none is left out of the ceiling (the
# options' minimum of shared items is lowered to 2 for this case); no bootstrap
TINY = AnalysisOptions(B=0, min_shared_items=2)
JUDGE = {"mae": 13 / 15, "rmse": np.sqrt(19 / 15), "bias": -0.2, "qwk": 198 / 293,
         "exact": 4 / 15, "within1": 12 / 15, "n_items": 5, "n_pairs": 15}
# The humans' own: d = x - c:  -1 .5 .5 | -1 -1 2 | -1.5 0 1.5 | -1 .5 .5 | 1.5 -1.5 0
#   MAE = 14 / 15; RMSE = sqrt(18 / 15); bias 0
#   QWK = 1 - (18/15) / (var x + var c) = 1 - 1.2 / (1.706667 + 1.306667) = 68 / 113
#   exact: i1 0 .5 .5, i2 .5 .5 0, i3 0 0 0, i4 0 .5 .5, i5 0 0 0 -> 3 / 15
#   within one: i1 1 1 1, i2 .5 .5 0, i3 .5 1 .5, i4 1 1 1, i5 .5 .5 1 -> 11 / 15
HUMAN = {"mae": 14 / 15, "rmse": np.sqrt(18 / 15), "bias": 0.0, "qwk": 68 / 113,
         "exact": 3 / 15, "within1": 11 / 15, "n_items": 5, "n_pairs": 15}


def _check(got: dict, want: dict, x: np.ndarray) -> None:
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=1e-12), k
    # correlations: scipy on the typed pairs; each wrong twin is far outside the tolerance
    assert got["pearson"] == pytest.approx(stats.pearsonr(x, C).statistic, abs=1e-12)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, C).statistic, abs=1e-12)
    assert got["kendall_tau_b"] == pytest.approx(
        stats.kendalltau(x, C, variant="b").statistic, abs=1e-12)
    assert got["linear_kappa"] == pytest.approx(_brute_linear_kappa(x, C), abs=1e-12)


def test_the_pairs_are_the_ones_typed_above():
    p = loo_pairs(M)
    assert p.x.tolist() == X_HUMAN.tolist() and p.c.tolist() == C.tolist()


def test_the_wrong_twins_are_far_apart_on_this_case():
    # so that a swap in the code fails the tolerances above by a wide margin
    assert abs(stats.pearsonr(X_JUDGE, C).statistic
               - stats.spearmanr(X_JUDGE, C).statistic) > 0.02
    assert abs(stats.kendalltau(X_JUDGE, C, variant="b").statistic
               - stats.kendalltau(X_JUDGE, C, variant="c").statistic) > 0.015
    assert abs(JUDGE["rmse"] - JUDGE["mae"]) > 0.25


def test_judge_metrics_by_hand():
    jm = judge_metrics(Ratings(M, ITEMS, HUMANS), J, "ordinal", VALUES, options=TINY)
    _check(jm.metrics, JUDGE, X_JUDGE)
    assert jm.metrics["n_scored_items"] == 5


def test_human_ceiling_by_hand():
    res = human_ceiling(M)
    _check(res, HUMAN, X_HUMAN)
    assert res["n_humans"] == 3 and res["left_out"] == []


def test_bland_altman_by_hand():
    # Against the per-item mean of all three humans: means 5/3, 8/3, 4, 14/3, 4, so
    # J - mean = -2/3, 1/3, 1, 1/3, -2; mean -1/5; deviations (-7, 8, 18, 8, -27) / 15,
    # sum of squares 1230 / 225, SD (n - 1) = sqrt(1230 / 900) = 1.169045;
    # limits -0.2 -+ 1.96 * 1.169045 = -2.491329, 2.091329 (at 1 SD: -1.369, 0.969).
    ba = judge_metrics(Ratings(M, ITEMS, HUMANS), J, "ordinal", VALUES,
                       options=TINY).metrics["bland_altman"]
    sd = np.sqrt(1230 / 900)
    assert ba["bias"] == pytest.approx(-0.2, abs=1e-12)
    assert ba["low"] == pytest.approx(-0.2 - 1.96 * sd, abs=1e-12)
    assert ba["high"] == pytest.approx(-0.2 + 1.96 * sd, abs=1e-12)
    assert ba["low"] == pytest.approx(-2.491329, abs=1e-6)
    assert ba["n_items"] == 5


def test_alphas_and_confusion_by_reference():
    samples = np.column_stack([J, [1, 3, 4, 5, 2], [2, 3, 5, 5, 2]])
    jm = judge_metrics(Ratings(M, ITEMS, HUMANS), J, "ordinal", VALUES, samples=samples,
                       options=TINY)
    kw = {"level_of_measurement": "ordinal", "value_domain": VALUES}
    # the krippendorff package wants raters × units
    assert jm.metrics["alpha_humans"] == pytest.approx(krippendorff.alpha(M.T, **kw), abs=1e-12)
    assert jm.metrics["alpha_with_judge"] == pytest.approx(
        krippendorff.alpha(np.column_stack([M, J]).T, **kw), abs=1e-12)
    assert jm.metrics["self_consistency_alpha"] == pytest.approx(
        krippendorff.alpha(samples.T, **kw), abs=1e-12)
    # confusion: rows the humans' lower median (2, 2, 4, 5, 4), columns the judge (1 3 5 5 2)
    want = np.zeros((5, 5), int)
    for h, j in ((2, 1), (2, 3), (4, 5), (5, 5), (4, 2)):
        want[h - 1, j - 1] += 1
    assert jm.confusion["matrix"] == want.tolist()


def _long() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [(ITEMS[i], HUMANS[h], "empathy", M[i, h]) for i in range(5) for h in range(3)]
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    judges = pd.DataFrame({"item_id": ITEMS, "judge": "J", "dimension": "empathy",
                           "score": J})
    return ratings, judges


def _check_json(res: dict) -> None:
    _check(res["judges"]["J"]["empathy"], JUDGE, X_JUDGE)
    _check(res["human_ceiling"]["empathy"], HUMAN, X_HUMAN)
    ba = res["judges"]["J"]["empathy"]["bland_altman"]
    assert ba["high"] == pytest.approx(-0.2 + 1.96 * np.sqrt(1230 / 900), abs=1e-12)


def test_analyze_prints_the_same_numbers():
    ratings, judges = _long()
    res = analyze(ratings, {"empathy": Scale("ordinal", tuple(VALUES))}, judges=judges,
                  options=AnalysisOptions(B=0, min_shared_items=2)).to_dict()
    _check_json(res)


def test_h2h_analyze_json_prints_the_same_numbers(tmp_path):
    ratings, judges = _long()
    ratings.to_csv(tmp_path / "r.csv", index=False)
    judges.to_csv(tmp_path / "j.csv", index=False)
    proc = run_h2h("analyze", "--ratings", str(tmp_path / "r.csv"), "--judges",
                   str(tmp_path / "j.csv"), "--scale", "empathy=1..5", "--bootstrap", "0",
                   "--min-shared-items", "2", "--json")
    _check_json(json.loads(proc.stdout))


def test_human_ceiling_cis_match_a_loop_over_the_same_resamples():
    from analysis.ceiling import value_qwk
    from analysis.resample import item_weights

    rng = np.random.default_rng(4)
    m = np.clip(np.rint(rng.normal(3, 1, 30)[:, None] + rng.normal(0, .8, (30, 3))), 1, 5)
    m[rng.random(m.shape) < 0.2] = np.nan
    res = human_ceiling(m, B=400, seed=9)
    p = loo_pairs(m)
    used = np.unique(p.item)
    w = item_weights(used.size, 400, 9).astype(int)
    pos = np.searchsorted(used, p.item)
    q, a = [], []
    for row in w:
        x, c = np.repeat(p.x, row[pos]), np.repeat(p.c, row[pos])
        q.append(value_qwk(x, c))
        a.append(np.mean(np.abs(x - c)))
    for key, boots in (("qwk_ci", q), ("mae_ci", a)):
        lo, hi = np.quantile(boots, [0.025, 0.975])
        assert res[key]["low"] == pytest.approx(lo, abs=1e-12)
        assert res[key]["high"] == pytest.approx(hi, abs=1e-12)


def test_rater_diagnostics_by_hand():
    from analysis.raters import rater_diagnostics

    d = rater_diagnostics(Ratings(M, ITEMS, HUMANS), "ordinal", VALUES)
    # A rated 1 2 3 4 5: mean 3, SD (n - 1) sqrt(10 / 4); the others' means per item are
    # 2, 3, 4.5, 5, 3.5, so the correlation is Pearson's r of those two columns
    a = d["A"]
    assert (a.n, a.mean) == (5, 3.0) and a.sd == pytest.approx(np.sqrt(2.5), abs=1e-12)
    assert a.corr_with_others == pytest.approx(
        stats.pearsonr([1, 2, 3, 4, 5], [2, 3, 4.5, 5, 3.5]).statistic, abs=1e-12)
    # alpha without A: B and C alone, from the krippendorff package
    assert a.alpha_without == pytest.approx(
        krippendorff.alpha(M[:, 1:].T, level_of_measurement="ordinal", value_domain=VALUES),
        abs=1e-12)
    c = d["C"]
    assert (c.n, c.mean) == (5, 4.0) and c.sd == pytest.approx(np.std([2, 4, 5, 5, 4], ddof=1))
    two = rater_diagnostics(Ratings(M[:, :2], ITEMS, HUMANS[:2]), "ordinal", VALUES)
    assert two["A"].alpha_without is None  # one rater left: nothing to compute


def test_rater_diagnostics_with_gaps_by_hand():
    from analysis.raters import rater_diagnostics

    nan = np.nan
    #        r0   r1   r2   r3
    m = np.array([[1, 2, 3, 2],
                  [2, nan, nan, nan],   # r0 alone: no others to compare with
                  [4, 4, 5, 3],
                  [5, 3, nan, nan],     # one other rater
                  [nan, 1, 2, nan],
                  [3, 3, 4, nan]], float)
    d = rater_diagnostics(Ratings(m, tuple(range(6)), ("r0", "r1", "r2", "r3")), "ordinal",
                          VALUES)

    def others_mean(j, rows):
        o = np.delete(m, j, axis=1)[rows]
        return [np.nanmean(row) for row in o]

    # r0: items 0, 2, 3, 5 have other ratings (item 1 has none): others' means 7/3, 4, 3, 3.5
    assert d["r0"].corr_with_others == pytest.approx(
        stats.pearsonr([1, 4, 5, 3], others_mean(0, [0, 2, 3, 5])).statistic, abs=1e-12)
    assert others_mean(0, [0, 2, 3, 5]) == pytest.approx([7 / 3, 4, 3, 3.5])
    # r2 scored 3, 5, 2, 4 against the others' 5/3, 11/3, 1 (r1 alone), 3
    assert d["r2"].corr_with_others == pytest.approx(
        stats.pearsonr([3, 5, 2, 4], others_mean(2, [0, 2, 4, 5])).statistic, abs=1e-12)
    assert others_mean(2, [0, 2, 4, 5]) == pytest.approx([5 / 3, 11 / 3, 1, 3])
    # r3 has two items: too few for a correlation, but a mean and an SD
    assert (d["r3"].n, d["r3"].mean, d["r3"].corr_with_others) == (2, 2.5, None)
    assert d["r3"].sd == pytest.approx(np.std([2, 3], ddof=1), abs=1e-12)
    for j, name in enumerate(("r0", "r1", "r2", "r3")):
        assert d[name].alpha_without == pytest.approx(krippendorff.alpha(
            np.delete(m, j, axis=1).T, level_of_measurement="ordinal", value_domain=VALUES),
            abs=1e-12), name
    # scores of small spread (SD below 1) still correlate: a gives 2, 3, 3, 3
    m2 = np.array([[2, 1, 1], [3, 3, 2], [3, 4, 5], [3, 5, 4]], float)
    d2 = rater_diagnostics(Ratings(m2, tuple(range(4)), ("a", "b", "c")), "ordinal", VALUES)
    assert np.std(m2[:, 0]) < 1
    assert d2["a"].corr_with_others == pytest.approx(
        stats.pearsonr(m2[:, 0], m2[:, 1:].mean(axis=1)).statistic, abs=1e-12)
    # three shared items are enough for a correlation
    m3 = np.array([[1, 2], [2, 2], [3, 5]], float)
    d3 = rater_diagnostics(Ratings(m3, tuple(range(3)), ("a", "b")), "ordinal", VALUES)
    assert d3["a"].corr_with_others == pytest.approx(
        stats.pearsonr([1, 2, 3], [2, 2, 5]).statistic, abs=1e-12)
    # one score: a mean, no SD
    one = rater_diagnostics(Ratings(np.array([[3, 4], [nan, 2], [nan, 5]], float),
                                    tuple(range(3)), ("a", "b")), "ordinal", VALUES)
    assert (one["a"].n, one["a"].mean, one["a"].sd) == (1, 3.0, None)

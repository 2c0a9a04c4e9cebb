"""Metrics against the humans: exact resample correlations, the leave-one-out pairing, the
system-level Kendall tau, and what is not estimable."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from analysis.ceiling import loo_pairs, pooled_metrics
from analysis.layout import Ratings
from analysis.options import AnalysisOptions
from analysis.refmetrics.compare import Scored, metric_dimension
from analysis.refmetrics.correlation import PairDesign, weighted_correlations
from analysis.refmetrics.system import rank_agreement, system_agreement
from analysis.resample import item_weights

SCIPY = {"pearson": lambda x, y: stats.pearsonr(x, y).statistic,
         "spearman": lambda x, y: stats.spearmanr(x, y).statistic,
         "kendall_tau_b": lambda x, y: stats.kendalltau(x, y, variant="b").statistic}


def _pairs(seed: int, n_items: int = 25):
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), rng.integers(1, 5, n_items))
    rng.shuffle(item)
    y = rng.integers(1, 6, item.size) + rng.choice([0.0, 0.5], item.size)  # ties, halves
    return rng, item, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("per_item", [False, True])
def test_resampled_correlations_equal_scipy_on_the_resample_written_out(seed, per_item):
    """Each bootstrap row's coefficients are those of the resample itself (pairs of an item
    drawn k times appear k times), computed from the draw counts: checked against scipy on
    the copies, with ties in both variables (and, for a metric, one value per item)."""
    rng, item, y = _pairs(seed)
    n = 25
    x = (rng.normal(size=n)[item] if per_item else rng.integers(1, 6, item.size).astype(float))
    design = PairDesign(item, y, n)
    xa = design.align(x)
    point = weighted_correlations(design, xa, np.ones((1, n)))
    for k, f in SCIPY.items():
        assert point[k][0] == pytest.approx(f(x, y), abs=1e-12)
    w = item_weights(n, 6, seed)
    boots = weighted_correlations(design, xa, w)
    for b in range(w.shape[0]):
        idx = np.concatenate([np.flatnonzero(item == i) for i in range(n)
                              for _ in range(int(w[b, i]))])
        for k, f in SCIPY.items():
            assert boots[k][b] == pytest.approx(f(x[idx], y[idx]), abs=1e-10), (k, b)


def test_rows_past_the_first_chunks_and_continuous_scores_on_both_sides():
    """Resamples are computed in chunks of at most 200 rows: the 401st row is that resample's
    own coefficient too. And a continuous metric against a continuous consensus (150 distinct
    values each: 22,500 cells, chunks of 177 rows) gives scipy's values."""
    rng, item, y = _pairs(3)
    x = rng.integers(1, 6, item.size).astype(float)
    design = PairDesign(item, y, 25)
    w = item_weights(25, 401, 3)
    boots = weighted_correlations(design, design.align(x), w)
    idx = np.concatenate([np.flatnonzero(item == i) for i in range(25)
                          for _ in range(int(w[400, i]))])
    for k, f in SCIPY.items():
        assert boots[k][400] == pytest.approx(f(x[idx], y[idx]), abs=1e-10), k
    item = np.arange(150)
    x, y = rng.normal(size=150), rng.normal(size=150)
    design = PairDesign(item, y, 150)
    point = weighted_correlations(design, design.align(x), np.ones((1, 150)))
    for k, f in SCIPY.items():
        assert point[k][0] == pytest.approx(f(x, y), abs=1e-12), k


def test_a_variable_constant_in_a_resample_gives_no_correlation_not_rounding_noise():
    """x takes 100.3 and 2, y takes 5, 7 and 100.3. A resample of only the first two items
    has x constant at 100.3, one of only the last two has y constant at 100.3; their
    variances come out as 1.5e-11 in floating point, not 0, and must still count as none
    (relative to the sum of squares, 6 * 100.3^2). Two pairs that agree give tau-b = 1
    (n_0 = 1, so its denominator is exactly 1)."""
    design = PairDesign(np.arange(4), np.array([5.0, 7.0, 100.3, 100.3]), 4)
    x = design.align(np.array([100.3, 100.3, 2.0, 100.3]))
    w = np.array([[3.0, 3.0, 0.0, 0.0], [0.0, 0.0, 3.0, 3.0]])
    res = weighted_correlations(design, x, w)
    for k in ("pearson", "spearman", "kendall_tau_b"):
        assert np.isnan(res[k]).all(), k
    two = weighted_correlations(PairDesign(np.arange(2), np.array([1.0, 2.0]), 2),
                                np.array([3.0, 5.0]), np.ones((1, 2)))
    assert {k: v[0] for k, v in two.items()} == {"pearson": pytest.approx(1.0),
                                                 "spearman": pytest.approx(1.0),
                                                 "kendall_tau_b": 1.0}


def _tiny() -> Ratings:
    # 5 items, 2 humans: each human's leave-one-out consensus is the other human's score
    m = np.array([[1, 2], [2, 1], [3, 4], [4, 3], [5, 5]], float)
    return Ratings(m, tuple("ABCDE"), ("h1", "h2"))


def test_a_metric_is_paired_with_the_leave_one_out_consensus_worked_by_hand():
    """h1 = 1,2,3,4,5 and h2 = 2,1,4,3,5; metric 10..50. The ten pooled pairs are
    (metric of the item, the other human's score): (10,2) (20,1) (30,4) (40,3) (50,5) for h1
    and (10,1) (20,2) (30,3) (40,4) (50,5) for h2. A metric held against the mean of all
    humans instead (1.5, 1.5, 3.5, 3.5, 5) would give other values."""
    metric = np.array([10, 20, 30, 40, 50], float)
    res = metric_dimension(_tiny(), [Scored("bleu", "metric", metric)], options=AnalysisOptions(B=0,
                           min_units=5, min_shared_items=2)).to_dict()
    x = [10, 20, 30, 40, 50, 10, 20, 30, 40, 50]
    c = [2, 1, 4, 3, 5, 1, 2, 3, 4, 5]
    row = next(r for r in res["rows"] if r["name"] == "bleu")
    for k, f in SCIPY.items():
        assert row[k]["value"] == pytest.approx(f(x, c), abs=1e-12)
    assert row["spearman"]["value"] != pytest.approx(
        stats.spearmanr(metric, [1.5, 1.5, 3.5, 3.5, 5]).statistic)
    assert row["qwk"] is None  # no kappa for a continuous metric
    ceiling = res["rows"][0]
    assert ceiling["name"] == "human ceiling"
    # the ceiling pairs are (1,2) (2,1) (3,4) (4,3) (5,5) and their mirror images
    hx, hc = [1, 2, 3, 4, 5, 2, 1, 4, 3, 5], [2, 1, 4, 3, 5, 1, 2, 3, 4, 5]
    for k, f in SCIPY.items():
        assert ceiling[k]["value"] == pytest.approx(f(hx, hc), abs=1e-12)
    assert row["minus_ceiling"]["spearman"]["value"] == pytest.approx(
        SCIPY["spearman"](x, c) - SCIPY["spearman"](hx, hc))
    assert (res["n_items"], res["n_pairs"], res["n_humans"]) == (5, 10, 2)


def _study(seed: int = 3, n: int = 60, raters: int = 5, per_item: int = 3):
    rng = np.random.default_rng(seed)
    quality = rng.normal(3, 1, n)
    m = np.full((n, raters), np.nan)
    for i in range(n):
        for j in rng.choice(raters, per_item, replace=False):
            m[i, j] = np.clip(np.rint(quality[i] + rng.normal(0, .7)), 1, 5)
    return Ratings(m, tuple(f"i{i}" for i in range(n)), tuple(f"h{j}" for j in
                                                                 range(raters))), quality, rng


def test_the_ceiling_row_equals_the_human_ceiling_of_h2h_analyze():
    humans, quality, rng = _study()
    metric = quality + rng.normal(0, 1, quality.size)
    res = metric_dimension(humans, [Scored("m", "metric", metric)], options=AnalysisOptions(B=0,
                           min_shared_items=5)).to_dict()
    ref = pooled_metrics(loo_pairs(humans.matrix, min_shared_items=5))
    for k in ("pearson", "spearman", "kendall_tau_b"):
        assert res["rows"][0][k]["value"] == pytest.approx(ref[k], abs=1e-12)


def test_rank_statistics_and_their_cis_ignore_a_monotone_rescaling():
    """One resampling for all rows: a metric and its cube get the same Spearman and Kendall
    values and CIs (ranks), a different Pearson; an identical copy gets identical numbers."""
    humans, quality, rng = _study()
    m = quality + rng.normal(0, 1, quality.size)
    res = metric_dimension(humans,
                           [Scored("m", "metric", m), Scored("m3", "metric", m ** 3),
                            Scored("copy", "judge", m.copy())],
                           options=AnalysisOptions(B=300, seed=4, min_shared_items=5)).to_dict()
    rows = {r["name"]: r for r in res["rows"]}
    for k in ("spearman", "kendall_tau_b"):
        assert rows["m"][k] == pytest.approx(rows["m3"][k])
    assert rows["m"]["pearson"]["value"] != pytest.approx(rows["m3"]["pearson"]["value"])
    assert rows["m"]["spearman"] == rows["copy"]["spearman"]
    lo, hi = rows["m"]["spearman"]["low"], rows["m"]["spearman"]["high"]
    assert lo < rows["m"]["spearman"]["value"] < hi
    d = rows["m"]["minus_ceiling"]["spearman"]
    assert d["low"] < d["value"] < d["high"]


def test_every_row_is_on_the_same_items_and_missing_rows_are_named():
    humans, quality, _ = _study()
    judge = np.rint(np.clip(quality, 1, 5))
    judge[:4] = np.nan  # unscored
    res = metric_dimension(humans,
                           [Scored("j", "judge", judge),
                            Scored("empty", "metric", np.full(quality.size, np.nan)),
                            Scored("m", "metric", quality)],
                           options=AnalysisOptions(B=0, min_shared_items=5)).to_dict()
    assert res["n_items"] == 56
    assert any("4 items" in n and "left out" in n for n in res["notes"])
    assert any(n.startswith("empty: no score") for n in res["notes"])
    assert next(r for r in res["rows"] if r["name"] == "empty")["status"] == "no scores"


def test_a_metric_that_does_not_vary_is_not_estimable_and_says_why():
    humans, quality, _ = _study()
    res = metric_dimension(humans, [Scored("flat", "metric", np.full(quality.size, 7.0))],
                           options=AnalysisOptions(B=100, min_shared_items=5)).to_dict()
    flat = next(r for r in res["rows"] if r["name"] == "flat")
    assert flat["spearman"] == {"value": None, "low": None, "high": None}
    assert flat["minus_ceiling"]["spearman"]["value"] is None
    assert "flat: correlations not estimable (its scores do not vary on these items)" in \
        res["notes"]


def test_too_few_items_and_nominal_scales_are_not_estimable():
    humans = _tiny()
    res = metric_dimension(humans, [Scored("m", "metric", np.arange(5.0))],
                           options=AnalysisOptions(B=0, min_units=6, min_shared_items=2)).to_dict()
    assert res["status"] == "not estimable"
    assert all(r["spearman"]["value"] is None for r in res["rows"])
    assert any("only 5 items" in n for n in res["notes"])
    nominal = metric_dimension(humans, [Scored("m", "metric", np.arange(5.0))], ordered=False,
                               options=AnalysisOptions(B=0)).to_dict()
    assert nominal["status"] == "not estimable" and nominal["rows"] == []


# --- system level ---------------------------------------------------------------------------

def test_system_tau_worked_by_hand():
    """Humans A > B > C > D, metric A > C > B > D: 5 of 6 model pairs concordant, 1
    discordant, so tau-b = (5 - 1) / 6 and 5/6 of the orderings are right."""
    r = system_agreement(np.array([4., 3, 2, 1]), {"m": np.array([.9, .5, .7, .1])},
                         np.array(list("ABCD")), np.arange(4), B=0).to_dict()["rows"]["m"]
    assert r["kendall_tau_b"]["value"] == pytest.approx(4 / 6)
    assert r["kendall_tau_b"]["value"] == pytest.approx(
        stats.kendalltau([4, 3, 2, 1], [.9, .5, .7, .1]).statistic)
    assert r["pairwise_accuracy"]["value"] == pytest.approx(5 / 6)
    assert r["pairs_ordered_by_humans"] == 6


def test_system_ties_worked_by_hand():
    """Humans tie A and B (3, 3, 2, 1), metric .9 .5 .7 .1: of the 5 pairs the humans order,
    4 concordant and B-C discordant: tau-b = (4 - 1) / sqrt((6 - 1)(6 - 0)), accuracy 4/5.
    A metric tie (.9 .9 .5 .1 against 4 3 2 1) counts one half: (5 + 0.5) / 6 right, tau-b =
    5 / sqrt(6 * 5)."""
    tau, acc = rank_agreement(np.array([3., 3, 2, 1]), np.array([.9, .5, .7, .1]))
    assert tau[0] == pytest.approx(3 / np.sqrt(30)) and acc[0] == pytest.approx(0.8)
    assert tau[0] == pytest.approx(stats.kendalltau([3, 3, 2, 1], [.9, .5, .7, .1]).statistic)
    tau, acc = rank_agreement(np.array([4., 3, 2, 1]), np.array([.9, .9, .5, .1]))
    assert tau[0] == pytest.approx(5 / np.sqrt(30)) and acc[0] == pytest.approx(5.5 / 6)


def test_system_means_average_items_and_two_models_give_no_tau():
    # model X: items 4 and 2 (mean 3); model Y: item 1 (mean 1); the metric reverses them
    res = system_agreement(np.array([4., 2, 1]), {"m": np.array([0., 0., 5.])},
                           np.array(["X", "X", "Y"]), np.array(["s1", "s2", "s1"]), B=0).to_dict()
    assert res["human_means"] == {"X": 3.0, "Y": 1.0}
    assert res["rows"]["m"]["kendall_tau_b"]["value"] is None
    assert res["rows"]["m"]["pairwise_accuracy"]["value"] == 0.0
    assert any("not estimable with 2 models" in n for n in res["notes"])


def test_scenario_bootstrap_equals_the_resamples_written_out():
    rng = np.random.default_rng(5)
    models, scen = np.array(list("ABCD") * 12), np.repeat(np.arange(12), 4)
    human = rng.normal(size=48) + (models == "A") * 1.5 - (models == "D")
    metric = human + rng.normal(0, 1.5, 48)
    res = system_agreement(human, {"m": metric}, models, scen, B=40, seed=7).to_dict()
    w = item_weights(12, 40, 7)
    taus = []
    for b in range(40):
        idx = np.concatenate([np.flatnonzero(scen == s) for s in range(12)
                              for _ in range(int(w[b, s]))])
        hm = [human[idx][models[idx] == m].mean() for m in "ABCD"]
        mm = [metric[idx][models[idx] == m].mean() for m in "ABCD"]
        taus.append(stats.kendalltau(hm, mm).statistic)
    lo, hi = np.quantile(taus, [0.025, 0.975])
    got = res["rows"]["m"]["kendall_tau_b"]
    assert (got["low"], got["high"]) == pytest.approx((lo, hi))


def test_a_ranking_every_scenario_agrees_on_has_a_degenerate_ci():
    models, scen = np.array(list("ABC") * 10), np.repeat(np.arange(10), 3)
    human = np.tile([3.0, 2.0, 1.0], 10)
    res = system_agreement(human, {"m": human * 10}, models, scen, B=100, seed=1).to_dict()
    assert res["rows"]["m"]["kendall_tau_b"] == {"value": 1.0, "low": 1.0, "high": 1.0}


def _share_right(h, r, tol=1e-12):
    """The share of the humans' pairwise orderings the metric gets right, a metric tie one
    half, written as a loop over model pairs."""
    right = ordered = 0.0
    for a in range(len(h)):
        for b in range(a + 1, len(h)):
            dh, dr = h[a] - h[b], r[a] - r[b]
            if abs(dh) <= tol * max(1.0, abs(h[a]), abs(h[b])):
                continue
            ordered += 1
            if abs(dr) <= tol * max(1.0, abs(r[a]), abs(r[b])):
                right += 0.5
            elif np.sign(dh) == np.sign(dr):
                right += 1
    return right / ordered if ordered else np.nan


def _written_out(human, metric, models, scen, w):
    """Per resample (a row of scenario draw counts), the model means of the resample written
    out, then scipy's tau-b and the share right; NaN where a model has no item."""
    names, scens = sorted(set(models)), sorted(set(scen))
    taus, shares = [], []
    for row in w:
        idx = np.concatenate([np.flatnonzero(scen == s) for k, s in enumerate(scens)
                              for _ in range(int(row[k]))])
        hm = [human[idx][models[idx] == m].mean() if np.any(models[idx] == m) else np.nan
              for m in names]
        mm = [metric[idx][models[idx] == m].mean() if np.any(models[idx] == m) else np.nan
              for m in names]
        if np.isnan(hm).any():
            taus.append(np.nan)
            shares.append(np.nan)
            continue
        taus.append(stats.kendalltau(hm, mm).statistic)
        shares.append(_share_right(hm, mm))
    return np.array(taus), np.array(shares)


def test_system_record_on_an_unbalanced_design_equals_the_resamples_written_out():
    """Model A answered two items per scenario, B-D one: the bootstrap's model means divide
    by each model's own count in the resample (with equal counts, scaling every mean alike
    would keep the ranking and hide a wrong divisor). Every field of the record, at ci = .9."""
    rng = np.random.default_rng(11)
    models = np.array((["A", "A", "B", "C", "D"]) * 6)
    scen = np.repeat(np.arange(6), 5)
    human = rng.normal(size=30) + (models == "A") * 0.8 - (models == "D") * 0.6
    metric = human + rng.normal(0, 1.0, 30)
    res = system_agreement(human, {"m": metric}, models, scen, B=200, seed=3, ci=0.9)
    got = res.to_dict()
    hm = {m: float(human[models == m].mean()) for m in "ABCD"}
    mm = {m: float(metric[models == m].mean()) for m in "ABCD"}
    assert {k: got[k] for k in ("n_models", "n_scenarios", "n_items", "unit", "resampled",
                                "B", "seed", "min_models", "notes")} == {
        "n_models": 4, "n_scenarios": 6, "n_items": 30, "unit": "model",
        "resampled": "scenarios", "B": 200, "seed": 3, "min_models": 3, "notes": []}
    assert got["human_means"] == pytest.approx(hm, abs=1e-12)
    row = got["rows"]["m"]
    assert row["model_means"] == pytest.approx(mm, abs=1e-12)
    assert row["pairs_ordered_by_humans"] == 6
    taus, shares = _written_out(human, metric, models, scen, item_weights(6, 200, 3))
    assert row["kendall_tau_b"]["value"] == pytest.approx(
        stats.kendalltau(list(hm.values()), list(mm.values())).statistic, abs=1e-12)
    assert row["pairwise_accuracy"]["value"] == pytest.approx(
        _share_right(list(hm.values()), list(mm.values())), abs=1e-12)
    assert (row["kendall_tau_b"]["low"], row["kendall_tau_b"]["high"]) == pytest.approx(
        tuple(np.quantile(taus, [0.05, 0.95])), abs=1e-12)
    assert (row["pairwise_accuracy"]["low"], row["pairwise_accuracy"]["high"]) == \
        pytest.approx(tuple(np.quantile(shares, [0.05, 0.95])), abs=1e-12)
    assert res.rows["m"].pairwise_accuracy.low < res.rows["m"].pairwise_accuracy.high


def test_resamples_that_lose_a_model_are_counted_and_left_out():
    """Model C answered only in scenario 0, once: a resample without scenario 0 has no mean
    for C (counted in the note, left out of the CI); one that draws it once has C's one item,
    a mean like any other."""
    rng = np.random.default_rng(2)
    models = np.array(["A", "B", "C", "A", "B", "A", "B"])
    scen = np.array([0, 0, 0, 1, 1, 2, 2])
    human = rng.normal(size=7)
    metric = human + rng.normal(0, 0.5, 7)
    w = item_weights(3, 300, 4)
    lost = int(np.sum(w[:, 0] == 0))
    assert lost >= 2 and np.any(w[:, 0] == 1)
    res = system_agreement(human, {"m": metric}, models, scen, B=300, seed=4)
    assert res.notes == (f"{lost} of 300 resamples left a model without items and give no "
                         "value",)
    taus, shares = _written_out(human, metric, models, scen, w)
    ok = np.isfinite(taus)
    assert ok.sum() == 300 - lost
    row = res.rows["m"]
    assert (row.kendall_tau_b.low, row.kendall_tau_b.high) == pytest.approx(
        tuple(np.quantile(taus[ok], [0.025, 0.975])), abs=1e-12)
    assert (row.pairwise_accuracy.low, row.pairwise_accuracy.high) == pytest.approx(
        tuple(np.quantile(shares[ok], [0.025, 0.975])), abs=1e-12)
    # one resample (seed 0 draws scenarios 1, 1, 2): it loses C, and says so
    assert item_weights(3, 1, 0).tolist() == [[0.0, 2.0, 1.0]]
    one = system_agreement(human, {"m": metric}, models, scen, B=1, seed=0)
    assert one.notes == ("1 of 1 resamples left a model without items and give no value",)


def test_system_bootstrap_needs_two_scenarios_and_two_models():
    """One scenario: every resample is the study itself, so there is no CI; two scenarios
    give one; two models give the share of orderings its CI (tau needs three models)."""
    rng = np.random.default_rng(8)
    models = np.array(list("ABC") * 2)
    human, metric = rng.normal(size=6), rng.normal(size=6)
    one = system_agreement(human, {"m": metric}, models, np.zeros(6), B=50, seed=1)
    assert one.rows["m"].kendall_tau_b.low is None
    assert one.rows["m"].pairwise_accuracy.low is None
    two = system_agreement(human, {"m": metric}, models, np.repeat([0, 1], 3), B=50, seed=1)
    assert two.rows["m"].kendall_tau_b.low is not None and two.notes == ()
    pair = system_agreement(human[:4], {"m": metric[:4]}, np.array(list("ABAB")),
                            np.repeat([0, 1], 2), B=50, seed=1)
    assert pair.rows["m"].kendall_tau_b.value is None
    assert pair.rows["m"].pairwise_accuracy.low is not None


def test_system_defaults_ties_up_to_rounding_and_humans_who_rank_nothing():
    """B = 1000 and seed 0 by default. The means 1000.1..1000.3 / 3 and 1000.2 differ by
    1.1e-13 in floating point: a tie (relative tolerance 1e-12), so the humans order 5 of the
    6 pairs. Humans who give every model the same mean order none: tau and the share are not
    estimable (None, not NaN)."""
    models = np.array(["A", "A", "A", "B", "B", "B", "C", "C", "C", "D", "D", "D"])
    scen = np.tile([0, 1, 2], 4)
    human = np.array([1000.1, 1000.2, 1000.3] + [1000.2] * 3 + [3.0] * 3 + [1.0] * 3)
    assert human[:3].sum() / 3 != 1000.2
    metric = np.array([4.0] * 3 + [3.0] * 3 + [2.0] * 3 + [1.0] * 3)
    res = system_agreement(human, {"m": metric}, models, scen)
    assert (res.B, res.seed, res.notes) == (1000, 0, ())
    row = res.rows["m"]
    assert row.pairs_ordered_by_humans == 5
    assert row.kendall_tau_b.value == pytest.approx(5 / np.sqrt(5 * 6))
    assert row.pairwise_accuracy.value == 1.0
    flat = system_agreement(np.ones(12), {"m": metric}, models, scen, B=0).rows["m"]
    assert flat.pairs_ordered_by_humans == 0
    assert (flat.kendall_tau_b.value, flat.pairwise_accuracy.value) == (None, None)


def test_rank_agreement_row_by_row():
    """Each row on its own: a tie in one row (the tolerance is 1e-12 of the larger value, at
    least 1e-12: 1.5e-12 apart is not a tie) does not change another row's denominators; a
    missing value in either ranking makes its row NaN; two models give tau-b = +-1."""
    h = np.array([[1.0, 1.0, 2.0], [1.0, 2.0, 3.0], [1.0, np.nan, 3.0], [1.0, 2.0, 3.0],
                  [0.0, 1.5e-12, 1.0]])
    r = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 3.0], [1.0, 2.0, 3.0], [1.0, np.nan, 3.0],
                  [0.0, 1.0, 2.0]])
    tau, share = rank_agreement(h, r)
    for k in (0, 1, 4):
        ref = stats.kendalltau(h[k], r[k]).statistic
        assert tau[k] == pytest.approx(ref, abs=1e-12), k
        assert share[k] == pytest.approx(_share_right(h[k], r[k]), abs=1e-12), k
    assert (share[0], share[1], share[4]) == (1.0, pytest.approx(2.5 / 3), 1.0)
    assert np.isnan(tau[2:4]).all() and np.isnan(share[2:4]).all()
    tau, share = rank_agreement(np.array([1.0, 2.0]), np.array([5.0, 3.0]))
    assert (tau[0], share[0]) == (-1.0, 0.0)

"""The agreement block of one dimension (`analysis.agreement.human_block`), field by field.

Each block is checked whole: every key, every note word for word, and every number against an
independent computation — the `krippendorff` package for alpha, statsmodels for Fleiss' kappa,
scikit-learn for Cohen's kappa, Gwet's (2014) formulas written out here for AC1/AC2 and
Brennan–Prediger, pairs counted by hand for percent agreement — so a dropped option, a renamed
key or a reworded reason fails. The options are deliberately not the defaults (B, seed, level,
method, alpha_min, minimums), so an option that is not passed on shows."""

from __future__ import annotations

from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from analysis.agreement import human_block
from analysis.alpha import alpha_bootstrap
from analysis.analyze import AnalysisOptions
from analysis.icc import icc_from_matrix
from analysis.layout import Ratings
from analysis.raters import binary_checks
from analysis.scales import Scale

S5 = Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))
OPT = AnalysisOptions(B=200, seed=7, ci=0.90, alpha_min=0.8, ci_method="hk", min_units=3,
                      min_shared_items=5)
KEYS = {"level", "scale", "n_items", "n_raters", "n_ratings", "n_cannot_rate",
        "n_items_pairable", "status", "not_estimable", "percent_exact", "percent_within1",
        "raters", "alpha", "alpha_ci", "fleiss_kappa", "cohen_kappa", "cohen_pairs", "icc",
        "icc_table", "gwet", "brennan_prediger", "notes"}
CI_KEYS = {"method", "level", "low", "high", "B", "seed", "q_below_min", "alpha_min", "on"}


def _matrix(seed: int = 3, n: int = 12, k: int = 4, lo: int = 1, hi: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lat = rng.integers(lo, hi + 1, n)
    return np.clip(lat[:, None] + rng.integers(-1, 2, (n, k)), lo, hi).astype(float)


def _long(m: np.ndarray) -> pd.DataFrame:
    """items × raters → long rows; NaN cells are 'cannot rate' entries."""
    rows = [(f"i{i:02d}", f"r{j}", m[i, j])
            for i in range(m.shape[0]) for j in range(m.shape[1])]
    return pd.DataFrame(rows, columns=["item", "rater", "score"])


def _pairs(m: np.ndarray, tol: float) -> float:
    """Mean over items (two or more ratings) of the share of rating pairs within ``tol``."""
    shares = []
    for row in m:
        x = row[~np.isnan(row)]
        if x.size >= 2:
            pairs = list(combinations(x, 2))
            shares.append(sum(abs(a - b) <= tol for a, b in pairs) / len(pairs))
    return float(np.mean(shares))


def _gwet(m: np.ndarray, values, kind: str) -> float:
    """Gwet (2014, ch. 3, eq. 3.3.1–3.3.3 with weights, ch. 2): p_a over items with r_i >= 2
    of sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)), r*_ik = sum_l w_kl r_il; p_e = T_w /
    (q (q - 1)) * sum_k pi_k (1 - pi_k); weights by value distance over the scale's range."""
    v = np.asarray(values, float)
    q = v.size
    d = np.abs(v[:, None] - v[None, :]) / (v.max() - v.min())
    w = {"unweighted": (d == 0).astype(float), "linear": 1 - d, "quadratic": 1 - d ** 2}[kind]
    counts = np.array([[np.sum(row == x) for x in v] for row in m], float)
    r_i = counts.sum(axis=1)
    ok = r_i >= 2
    star = counts[ok] @ w.T
    pa = np.mean(np.sum(counts[ok] * (star - 1), axis=1) / (r_i[ok] * (r_i[ok] - 1)))
    pi = np.mean(counts[r_i > 0] / r_i[r_i > 0][:, None], axis=0)
    pe = w.sum() / (q * (q - 1)) * np.sum(pi * (1 - pi))
    return float((pa - pe) / (1 - pe))


def _bp(m: np.ndarray, values) -> float:
    """Brennan & Prediger (1981): (p_a - 1/q) / (1 - 1/q)."""
    q = len(values)
    return (_pairs(m, 0) - 1 / q) / (1 - 1 / q)


def _cohen_by_value(a: np.ndarray, b: np.ndarray, values, power: int) -> float:
    """Cohen (1968): 1 − Σ d·o / Σ d·e with disagreement weights d = |x − y|^power over the
    scale's values (power 0: d = 1 off the diagonal, the unweighted kappa)."""
    v = np.asarray(values, float)
    idx = {x: i for i, x in enumerate(v)}
    o = np.zeros((v.size, v.size))
    for x, y in zip(a, b, strict=True):
        o[idx[x], idx[y]] += 1
    o /= o.sum()
    e = np.outer(o.sum(axis=1), o.sum(axis=0))
    diff = np.abs(v[:, None] - v[None, :])
    d = (diff > 0).astype(float) if power == 0 else diff ** power
    return float(1 - (d * o).sum() / (d * e).sum())


def _kripp(m: np.ndarray, level: str, values) -> float:
    return float(krippendorff.alpha(reliability_data=m.T, level_of_measurement=level,
                                    value_domain=list(values)))


def _ratings(m: np.ndarray) -> Ratings:
    return Ratings(m, tuple(f"i{i:02d}" for i in range(m.shape[0])),
                   tuple(f"r{j}" for j in range(m.shape[1])))


def test_a_complete_ordinal_block_field_by_field():
    m = _matrix()
    res = human_block(_long(m), S5, OPT).to_dict()
    assert set(res) == KEYS
    assert {k: res[k] for k in ("level", "scale", "n_items", "n_raters", "n_ratings",
                                "n_cannot_rate", "n_items_pairable", "status",
                                "not_estimable")} == {
        "level": "ordinal", "scale": [1.0, 2.0, 3.0, 4.0, 5.0], "n_items": 12, "n_raters": 4,
        "n_ratings": 48, "n_cannot_rate": 0, "n_items_pairable": 12, "status": "ok",
        "not_estimable": None}
    assert res["percent_exact"] == pytest.approx(_pairs(m, 0), abs=1e-12)
    assert res["percent_within1"] == pytest.approx(_pairs(m, 1), abs=1e-12)
    for lv in ("nominal", "ordinal", "interval", "ratio"):
        assert res["alpha"][lv] == pytest.approx(_kripp(m, lv, S5.values), abs=1e-9), lv
    counts = np.array([[np.sum(row == x) for x in S5.values] for row in m])
    assert res["fleiss_kappa"] == pytest.approx(fleiss_kappa(counts, method="fleiss"),
                                                abs=1e-12)
    for kind, weights in (("unweighted", None), ("linear", "linear"),
                          ("quadratic", "quadratic")):
        # every pair shares all 12 items, so the weighted mean over pairs is the plain mean
        want = np.mean([cohen_kappa_score(m[:, a], m[:, b], weights=weights,
                                          labels=list(S5.values))
                        for a, b in combinations(range(4), 2)])
        assert res["cohen_kappa"][kind] == pytest.approx(want, abs=1e-12), kind
    assert res["cohen_pairs"] == {
        "weighting": "mean over rater pairs weighted by their shared items", "used": 6,
        "too_few_items": 0, "undefined": {"unweighted": 0, "linear": 0, "quadratic": 0},
        "min_items": 5, "shared_items": 72}
    for kind, key in (("unweighted", "ac1"), ("linear", "ac2_linear"),
                      ("quadratic", "ac2_quadratic")):
        assert res["gwet"][key] == pytest.approx(_gwet(m, S5.values, kind), abs=1e-12), key
    assert set(res["gwet"]) == {"ac1", "ac2_linear", "ac2_quadratic"}
    assert res["brennan_prediger"] == pytest.approx(_bp(m, S5.values), abs=1e-12)
    # the ICC forms of the complete table at the requested 90% (icc_from_matrix is pinned to
    # Shrout & Fleiss 1979, Table 2, and to R psych::ICC in test_icc.py)
    ref = icc_from_matrix(m, 0.90)
    assert list(res["icc"]) == list(ref)
    for k, v in ref.items():
        assert res["icc"][k].pop("why_no_ci") is None, k  # every form has its interval
        assert res["icc"][k] == pytest.approx({"value": v.value, "low": v.low, "high": v.high},
                                              abs=1e-12), k
    assert res["icc"]["ICC2"]["high"] - res["icc"]["ICC2"]["low"] < \
        icc_from_matrix(m, 0.95)["ICC2"].high - icc_from_matrix(m, 0.95)["ICC2"].low
    assert res["icc_table"] == {"method": "anova", "n_items": 12, "n_raters": 4,
                                "n_ratings": 48}
    # the interval: every option passed on (B, seed, level, alpha_min, method, values)
    boot = alpha_bootstrap(_ratings(m), "ordinal", B=200, seed=7, ci=0.90, alpha_min=0.8,
                           method="hk", values=S5.values).as_dict()
    assert res["alpha_ci"] == {**boot, "alpha_min": 0.8, "on": "ordinal"}
    assert set(res["alpha_ci"]) == CI_KEYS
    assert (res["alpha_ci"]["method"], res["alpha_ci"]["B"], res["alpha_ci"]["seed"],
            res["alpha_ci"]["level"]) == ("hk", 200, 7, 0.90)
    assert res["alpha_ci"] != {**alpha_bootstrap(_ratings(m), "ordinal", B=200, seed=0,
                                                 ci=0.90, alpha_min=0.8, method="hk",
                                                 values=S5.values).as_dict(),
                               "alpha_min": 0.8, "on": "ordinal"}
    # each rater: n, mean, SD, alpha without them, Pearson r with the others' mean
    assert list(res["raters"]) == ["r0", "r1", "r2", "r3"]
    for j, name in enumerate(res["raters"]):
        d = res["raters"][name]
        others = np.delete(m, j, axis=1)
        assert d["n"] == 12
        assert d["mean"] == pytest.approx(m[:, j].mean(), abs=1e-12)
        assert d["sd"] == pytest.approx(np.std(m[:, j], ddof=1), abs=1e-12)
        assert d["alpha_without"] == pytest.approx(_kripp(others, "ordinal", S5.values),
                                                   abs=1e-9)
        assert d["corr_with_others"] == pytest.approx(
            pearsonr(m[:, j], others.mean(axis=1)).statistic, abs=1e-12)
    assert res["notes"] == [
        "cohen_kappa: mean over 6 rater pairs weighted by their shared items (72 in all)",
        "icc: two-way ANOVA on the complete table; 12 items × 4 raters, 48 ratings"]


def test_missing_ratings_a_pair_left_out_and_the_mixed_model_are_said():
    m = _matrix(seed=5, n=12, k=3)
    m = np.column_stack([m, np.full(12, np.nan)])
    m[:3, 3] = [2.0, 4.0, 1.0]          # r3 shares 3 items with each of the others
    m[5, 0] = np.nan                    # and one cell is a 'cannot rate' entry
    res = human_block(_long(m), S5, OPT).to_dict()
    assert set(res) == KEYS
    assert (res["n_items"], res["n_raters"], res["n_ratings"], res["n_cannot_rate"],
            res["n_items_pairable"]) == (12, 4, 38, 10, 12)
    assert res["cohen_pairs"]["used"] == 3 and res["cohen_pairs"]["too_few_items"] == 3
    assert res["cohen_pairs"]["shared_items"] == 11 + 11 + 12
    assert res["icc_table"] == {"method": "reml", "n_items": 12, "n_raters": 4,
                                "n_ratings": 38}
    for lv in ("nominal", "ordinal", "interval", "ratio"):
        assert res["alpha"][lv] == pytest.approx(_kripp(m, lv, S5.values), abs=1e-9), lv
    assert res["percent_exact"] == pytest.approx(_pairs(m, 0), abs=1e-12)
    assert res["notes"] == [
        "10 'cannot rate' entries are left out",
        "cohen_kappa: mean over 3 rater pairs weighted by their shared items (34 in all); "
        "3 pairs sharing fewer than 5 items left out",
        "icc: linear mixed model (crossed random items and raters, REML, as R psych::ICC with "
        "lme4) because ratings are missing; 12 items × 4 raters, 38 ratings"]


def test_two_raters_and_an_uneven_scale_measured_in_its_own_units():
    # an interval scale 0, 1, 2, 4: weights and "within one" go by value, not by position
    vals = (0.0, 1.0, 2.0, 4.0)
    sc = Scale("interval", vals)
    pos = np.array([[0, 1], [1, 1], [2, 3], [3, 3], [0, 0], [1, 2], [2, 2], [3, 2], [0, 1],
                    [3, 3]], float)
    m = np.array(vals)[pos.astype(int)]
    res = human_block(_long(m), sc, OPT).to_dict()
    assert res["percent_within1"] == pytest.approx(_pairs(m, 1), abs=1e-12)
    assert res["percent_within1"] == pytest.approx(0.8)  # 2↔4 is two units apart: 2 of 10
    for kind, key in (("unweighted", "ac1"), ("linear", "ac2_linear"),
                      ("quadratic", "ac2_quadratic")):
        assert res["gwet"][key] == pytest.approx(_gwet(m, vals, kind), abs=1e-12), key
    # ratio alpha is computed on a scale starting at 0
    assert res["alpha"]["ratio"] == pytest.approx(_kripp(m, "ratio", vals), abs=1e-9)
    assert res["notes"][0] == "cohen_kappa: the two raters' kappa on their 10 shared items"
    # Cohen's weighted kappa by value distance (|0 − 4| is four units, not three positions)
    for kind, power in (("unweighted", 0), ("linear", 1), ("quadratic", 2)):
        assert res["cohen_kappa"][kind] == pytest.approx(
            _cohen_by_value(m[:, 0], m[:, 1], vals, power), abs=1e-12), kind
    assert res["cohen_kappa"]["linear"] != pytest.approx(
        cohen_kappa_score(pos[:, 0], pos[:, 1], weights="linear"))
    # the interval is alpha's at the dimension's own level
    boot = alpha_bootstrap(_ratings(m), "interval", B=200, seed=7, ci=0.90, alpha_min=0.8,
                           method="hk", values=vals).as_dict()
    assert res["alpha_ci"] == {**boot, "alpha_min": 0.8, "on": "interval"}
    assert boot != alpha_bootstrap(_ratings(m), "ordinal", B=200, seed=7, ci=0.90,
                                   alpha_min=0.8, method="hk", values=vals).as_dict()


def test_a_scale_with_negative_values_has_no_ratio_alpha_and_says_why():
    sc = Scale("interval", (-2.0, -1.0, 0.0, 1.0, 2.0))
    m = _matrix(seed=11, lo=-2, hi=2)
    res = human_block(_long(m), sc, OPT).to_dict()
    assert res["alpha"]["ratio"] is None
    for lv in ("nominal", "ordinal", "interval"):
        assert res["alpha"][lv] == pytest.approx(_kripp(m, lv, sc.values), abs=1e-9), lv
    assert res["notes"][0] == "alpha.ratio: needs a scale without negative values"
    assert res["alpha_ci"]["on"] == "interval"


def test_a_nominal_scale_of_labels():
    sc = Scale.of_labels("nominal", ("calm", "sad", "angry"))
    m = _matrix(seed=4, k=3, lo=1, hi=3)
    res = human_block(_long(m), sc, OPT).to_dict()
    assert set(res) == KEYS | {"labels"}
    assert res["labels"] == ["calm", "sad", "angry"]
    assert res["alpha"] == {"nominal": pytest.approx(_kripp(m, "nominal", sc.values), abs=1e-9),
                            "ordinal": None, "interval": None, "ratio": None}
    assert res["icc"] == {f: None for f in ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")}
    assert res["icc_table"] is None
    assert res["notes"] == [
        "alpha: only the nominal level is meaningful for a nominal scale",
        "cohen_kappa: mean over 3 rater pairs weighted by their shared items (36 in all)",
        "icc: not meaningful for a nominal scale"]


def test_a_binary_scale_reports_prevalence_and_each_raters_checks():
    sc = Scale("nominal", (0.0, 1.0), binary=True)
    m = _matrix(seed=8, k=3, lo=0, hi=1)
    res = human_block(_long(m), sc, OPT).to_dict()
    b = binary_checks(_ratings(m))
    assert res["binary"] == {"prevalence": b.prevalence, "raters": b.raters}
    assert res["binary"]["prevalence"] == pytest.approx(np.mean(m == 1), abs=1e-12)
    assert "binary" not in human_block(_long(m), Scale("nominal", (0.0, 1.0)), OPT).to_dict()


@pytest.mark.parametrize(("values", "rest"), [
    ((1.0, 2.0, 3.0, 4.0, 5.0), "percent agreement, AC1 and Brennan–Prediger are 1"),
    ((1.0, 3.0), "percent agreement, AC1 and Brennan–Prediger are 1"),
])
def test_no_variance_on_a_scale_of_two_or_more_values(values, rest):
    m = np.full((6, 3), 3.0 if 3.0 in values else values[0])
    res = human_block(_long(m), Scale("ordinal", values), OPT).to_dict()
    assert set(res) == KEYS
    assert res["status"] == "no variance"
    assert res["not_estimable"] == (
        "every rating is 3: alpha, kappa and ICC are undefined (no variance); " + rest)
    assert res["notes"] == [res["not_estimable"]]
    assert res["gwet"] == {"ac1": 1.0, "ac2_linear": 1.0, "ac2_quadratic": 1.0}
    assert res["brennan_prediger"] == 1.0
    assert (res["percent_exact"], res["percent_within1"]) == (1.0, 1.0)
    assert res["alpha"] == {lv: None for lv in ("nominal", "ordinal", "interval", "ratio")}
    assert res["alpha_ci"] == {"method": "hk", "level": 0.90, "low": None, "high": None,
                               "B": 200, "seed": 7, "q_below_min": None, "alpha_min": 0.8,
                               "on": "ordinal"}


def test_no_variance_on_a_one_value_scale():
    m = np.full((6, 3), 2.5)
    res = human_block(_long(m), Scale("ordinal", (2.5,)), OPT).to_dict()
    assert res["not_estimable"] == (
        "every rating is 2.5: alpha, kappa and ICC are undefined (no variance); percent "
        "agreement is 1 (AC1 and Brennan–Prediger need a scale of two or more values: "
        "declare it)")
    assert res["gwet"] == {"ac1": None, "ac2_linear": None, "ac2_quadratic": None}
    assert res["brennan_prediger"] is None
    assert res["percent_exact"] == 1.0


def test_one_rater_is_not_estimable_with_the_reason():
    m = _matrix(k=1)
    res = human_block(_long(m), S5, OPT).to_dict()
    assert set(res) == KEYS
    assert (res["status"], res["not_estimable"]) == (
        "not estimable", "fewer than 2 raters: agreement cannot be computed")
    assert res["notes"] == ["fewer than 2 raters: agreement cannot be computed"]
    assert res["n_items_pairable"] == 0
    assert (res["percent_exact"], res["percent_within1"]) == (None, None)
    assert res["raters"] == {"r0": {"n": 12, "mean": pytest.approx(m.mean()),
                                    "sd": pytest.approx(np.std(m, ddof=1)),
                                    "alpha_without": None, "corr_with_others": None}}
    assert res["cohen_pairs"] is None and res["icc_table"] is None
    assert res["alpha_ci"]["on"] == "ordinal" and res["alpha_ci"]["alpha_min"] == 0.8


@pytest.mark.parametrize(("pairable", "minimum", "reason"), [
    (1, 5, "only 1 item rated by two or more raters (minimum 5): alpha, kappa, AC1/AC2 and "
           "ICC are not estimable"),
    (3, 4, "only 3 items rated by two or more raters (minimum 4): alpha, kappa, AC1/AC2 and "
           "ICC are not estimable"),
])
def test_too_few_pairable_items_names_the_count_and_the_minimum(pairable, minimum, reason):
    m = _matrix(n=8, k=2)
    m[pairable:, 1] = np.nan
    opt = AnalysisOptions(B=0, min_units=minimum)
    res = human_block(_long(m), S5, opt).to_dict()
    assert (res["status"], res["not_estimable"]) == ("not estimable", reason)
    assert res["n_items_pairable"] == pairable
    assert res["notes"] == [nm for nm in (
        f"{8 - pairable} 'cannot rate' entries are left out", reason)]
    # the agreement that is still defined is given on the items that do pair
    assert res["percent_exact"] == pytest.approx(_pairs(m, 0), abs=1e-12)
    assert res["gwet"]["ac1"] is None and res["alpha"]["ordinal"] is None


def test_no_ratings_at_all():
    res = human_block(pd.DataFrame({"item": ["a", "b"], "rater": ["x", "y"],
                                    "score": [np.nan, np.nan]}), S5, OPT).to_dict()
    assert set(res) == KEYS
    assert {k: res[k] for k in ("n_items", "n_raters", "n_ratings", "n_cannot_rate",
                                "n_items_pairable", "status", "not_estimable", "notes",
                                "raters")} == {
        "n_items": 0, "n_raters": 0, "n_ratings": 0, "n_cannot_rate": 2,
        "n_items_pairable": 0, "status": "no ratings", "not_estimable": "no ratings",
        "notes": ["2 'cannot rate' entries are left out", "no ratings"], "raters": {}}


def test_no_bootstrap_keeps_the_interval_record_and_one_resample_fills_it():
    m = _matrix()
    res = human_block(_long(m), S5, AnalysisOptions(B=0, seed=7, ci=0.90, alpha_min=0.8)).to_dict()
    assert res["alpha_ci"] == {"method": "unit", "level": 0.90, "low": None, "high": None,
                               "B": 0, "seed": 7, "q_below_min": None, "alpha_min": 0.8,
                               "on": "ordinal"}
    one = human_block(_long(m), S5, AnalysisOptions(B=1, seed=7)).to_dict()["alpha_ci"]
    assert one["B"] == 1 and one["low"] is not None and one["low"] == one["high"]


def test_every_pair_undefined_or_too_small_is_said_in_one_translatable_note():
    # r0 and r1 give 3 to items a0–a11, r2 and r3 give 4 to items b0–b11: within each group
    # kappa is 0/0, across the groups no item is shared
    rows = [(f"a{i}", r, 3.0) for i in range(12) for r in ("r0", "r1")] + \
           [(f"b{i}", r, 4.0) for i in range(12) for r in ("r2", "r3")]
    res = human_block(pd.DataFrame(rows, columns=["item", "rater", "score"]), S5, OPT).to_dict()
    note = ("cohen_kappa: not estimable, no rater pair has a defined kappa on at least 5 shared "
            "items; kappa undefined (no variance on the shared items) for 2 pairs (unweighted), "
            "2 pairs (linear), 2 pairs (quadratic)")
    # said once: not again as "cohen_kappa: not estimable on these data"
    assert res["notes"] == [note, "icc: linear mixed model (crossed random items and raters, "
                            "REML, as R psych::ICC with lme4) because ratings are missing; "
                            "24 items × 4 raters, 48 ratings"]
    assert res["cohen_kappa"] == {"unweighted": None, "linear": None, "quadratic": None}
    # the Chinese app shows it whole in Chinese, the weighting names too
    from annotate.services.i18n import translate, translations

    zh = translate(next(n for n in res["notes"] if n == note), translations("zh"))
    assert "未加权" in zh and "unweighted" not in zh and "quadratic" not in zh

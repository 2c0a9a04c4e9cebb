"""The leaderboard, the test–retest block, Cohen's kappa over rater pairs and the bootstrap
p-value, each pinned on a small case worked by hand or by a reference implementation
(statsmodels, the krippendorff package), tightly enough that the plausible wrong variant fails.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from analysis.analyze import AnalysisOptions, Scale, analyze
from analysis.chance import pairwise_cohen
from analysis.layout import Ratings
from analysis.leaderboard import leaderboard
from analysis.raters import retest_agreement
from analysis.resample import two_sided_p

VALUES = [1.0, 2.0, 3.0, 4.0, 5.0]


# --- leaderboard ------------------------------------------------------------------------------

#   item        model cond      scenario  ratings (r1, r2)  per-item mean (max)
#   s1-good-sap good  sap       s1        4, 5              4.5  (5)
#   s1-good-base good  baseline  s1        3, 4              3.5  (4)
#   s2-good-sap good  sap       s2        5, 5              5.0  (5)
#   s2-good-base good  baseline  s2        2, 3              2.5  (3)
#   s1-bad      bad   baseline  s1        1, 2              1.5  (2)
#   s2-bad      bad   baseline  s2        2, 2              2.0  (2)
#   s3-odd-sap  odd   sap       s3        4, 4              4.0
#   s4-odd-base odd   baseline  s4        3, 2              2.5
ITEMS = pd.DataFrame(
    [("s1-good-sap", "good", "sap", "dialogue", "s1"),
     ("s1-good-base", "good", "baseline", "dialogue", "s1"),
     ("s2-good-sap", "good", "sap", "itinerary", "s2"),
     ("s2-good-base", "good", "baseline", "itinerary", "s2"),
     ("s1-bad", "bad", "baseline", "dialogue", "s1"),
     ("s2-bad", "bad", "baseline", "itinerary", "s2"),
     ("s3-odd-sap", "odd", "sap", "dialogue", "s3"),
     ("s4-odd-base", "odd", "baseline", "dialogue", "s4")],
    columns=["item_id", "model", "condition", "task", "scenario"])
SCORES = {"s1-good-sap": (4, 5), "s1-good-base": (3, 4), "s2-good-sap": (5, 5),
          "s2-good-base": (2, 3), "s1-bad": (1, 2), "s2-bad": (2, 2), "s3-odd-sap": (4, 4),
          "s4-odd-base": (3, 2)}


def _scores() -> pd.DataFrame:
    return pd.DataFrame([(i, f"r{k}", "safety", float(s)) for i, ss in SCORES.items()
                         for k, s in enumerate(ss)],
                        columns=["item_id", "rater", "dimension", "score"])


def _cell(res, model, task):
    return next(c for c in res["cells"] if c["model"] == model and c["task"] == task)


def test_leaderboard_means_by_hand():
    res = leaderboard(_scores(), ITEMS, B=2000, seed=1).to_dict()
    # means of the per-item means (a per-item max would give 4.75 and 2.0)
    assert _cell(res, "good", "all")["mean"] == pytest.approx((4.5 + 3.5 + 5 + 2.5) / 4)
    assert _cell(res, "good", "dialogue")["mean"] == pytest.approx((4.5 + 3.5) / 2)
    assert _cell(res, "bad", "all")["mean"] == pytest.approx(1.75)
    assert _cell(res, "good", "all")["n_items"] == 4
    # two items: resampled means are 1.5, 1.75 or 2.0 with probabilities 1/4, 1/2, 1/4, so
    # the 2.5% and 97.5% percentiles are the two ends
    bad = _cell(res, "bad", "all")
    assert (bad["low"], bad["high"]) == (1.5, 2.0)


def test_leaderboard_sap_minus_baseline_by_hand():
    res = leaderboard(_scores(), ITEMS, B=2000, seed=1).to_dict()
    sap = {r["model"]: r for r in res["sap_vs_baseline"]}
    # paired by scenario: s1 4.5 - 3.5 = 1, s2 5 - 2.5 = 2.5; mean 1.75; resampled mean
    # differences are 1, 1.75, 2.5 with probabilities 1/4, 1/2, 1/4
    good = sap["good"]
    assert good["design"] == "paired by scenario" and good["n"] == 2
    assert good["diff"] == pytest.approx(1.75)
    assert (good["low"], good["high"]) == (1.0, 2.5)
    # no shared scenario: unpaired, 4.0 - 2.5, one item per arm: every resample would be 1.5,
    # a CI of width 0 that is no CI, so none is given (issue 12)
    odd = sap["odd"]
    assert odd["design"] == "unpaired" and odd["n"] == 2
    assert odd["diff"] == pytest.approx(1.5) and odd["low"] is None and odd["high"] is None
    assert "bad" not in sap  # no SAP arm


def test_leaderboard_cis_match_a_naive_bootstrap():
    rng = np.random.default_rng(0)
    x = rng.normal(3, 1, 40)
    items = pd.DataFrame({"item_id": [f"i{i}" for i in range(40)], "model": "m",
                          "condition": None, "task": "dialogue",
                          "scenario": [f"s{i}" for i in range(40)]})
    scores = pd.DataFrame({"item_id": items["item_id"], "rater": "r", "dimension": "d",
                           "score": x})
    cell = _cell(leaderboard(scores, items, B=4000, seed=3).to_dict(), "m", "all")
    naive = [np.mean(x[rng.integers(0, 40, 40)]) for _ in range(4000)]
    lo, hi = np.quantile(naive, [0.025, 0.975])
    assert cell["mean"] == pytest.approx(x.mean(), abs=1e-12)
    assert cell["low"] == pytest.approx(lo, abs=0.03) and cell["high"] == pytest.approx(hi,
                                                                                     abs=0.03)


def test_leaderboard_red_flags_and_fair_scores_by_hand():
    # s1-bad flagged by both raters (share 1), s2-bad by one (0.5): bad's share 0.75;
    # a rater with two flagged ratings of one item counts once
    flags = pd.DataFrame([("s1-bad", "r0", True), ("s1-bad", "r0", True),
                          ("s1-bad", "r1", True), ("s2-bad", "r0", True),
                          ("s2-bad", "r1", False), ("s1-good-sap", "r0", False)],
                         columns=["item_id", "rater", "red_flag"])
    fair = pd.DataFrame({"item_id": list(SCORES), "dimension": "safety",
                         "fair_score": [4.0, 3.0, 5.0, 2.0, 1.0, 3.0, 4.0, 2.0]})
    res = leaderboard(_scores(), ITEMS, B=500, seed=0, flags=flags, fair=fair).to_dict()
    red = {r["model"]: r for r in res["red_flags"]}
    assert red["bad"]["share"] == pytest.approx(0.75) and red["bad"]["n_items"] == 2
    assert red["good"]["share"] == 0.0
    bad = _cell(res, "bad", "all")
    assert bad["fair_mean"] == pytest.approx(2.0) and bad["fair_n"] == 2
    assert _cell(res, "good", "all")["fair_mean"] == pytest.approx(3.5)


def test_leaderboard_defaults_labels_and_rows():
    res = leaderboard(_scores(), ITEMS).to_dict()
    assert (res["B"], res["seed"], res["source"]) == (1000, 0, "humans")
    assert {c["dimension"] for c in res["cells"]} == {"safety"}
    # a row per model and task family, and a row per model over all families, each with the
    # number of the model's items in it
    assert {(r["model"], r["task"]): r["n_items"] for r in res["rows"]} == {
        ("good", "dialogue"): 2, ("good", "itinerary"): 2, ("bad", "dialogue"): 1,
        ("bad", "itinerary"): 1, ("odd", "dialogue"): 2,
        ("good", "all"): 4, ("bad", "all"): 2, ("odd", "all"): 2}
    # one item in a cell: its mean, and no interval (every resample is the same item)
    one = _cell(res, "bad", "dialogue")
    assert one["mean"] == pytest.approx(1.5) and one["n_items"] == 1
    assert one["low"] is None and one["high"] is None


def test_leaderboard_same_seed_same_numbers_and_other_columns_do_not_drop_scores():
    rng = np.random.default_rng(5)
    items = pd.DataFrame({"item_id": [f"i{i}" for i in range(30)], "model": "m",
                          "condition": None, "task": "dialogue",
                          "scenario": [f"s{i}" for i in range(30)]})
    # a judge's scored reply whose reason is missing is still a score
    scores = pd.DataFrame({"item_id": items["item_id"], "dimension": "d",
                           "score": rng.integers(1, 6, 30).astype(float),
                           "reason": [None if i % 3 else "ok" for i in range(30)]})
    fair = pd.DataFrame({"item_id": items["item_id"], "dimension": "d",
                         "fair_score": rng.normal(3, 1, 30)})
    first = leaderboard(scores, items, B=300, seed=7, fair=fair).to_dict()
    assert first == leaderboard(scores, items, B=300, seed=7, fair=fair).to_dict()
    cell = _cell(first, "m", "all")
    assert cell["n_items"] == 30 and cell["mean"] == pytest.approx(scores["score"].mean())


def _unpaired() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Model m: SAP items a, b (scores 4, 5) and baseline items c, d (2, 3), no scenario
    shared between the arms."""
    items = pd.DataFrame([("a", "m", "sap", "dialogue", "s1"), ("b", "m", "sap", "dialogue", "s2"),
                          ("c", "m", "baseline", "dialogue", "s3"),
                          ("d", "m", "baseline", "dialogue", "s4")],
                         columns=["item_id", "model", "condition", "task", "scenario"])
    scores = pd.DataFrame([(i, "safety", s) for i, s in
                           zip("abcd", (4.0, 5.0, 2.0, 3.0), strict=True)],
                          columns=["item_id", "dimension", "score"])
    return scores, items


def test_leaderboard_unpaired_sap_interval_by_hand():
    # no scenario shared between the arms: unpaired. SAP per-item means 4 and 5, baseline 2
    # and 3: each arm's resampled mean is min, midpoint or max with probabilities 1/4, 1/2,
    # 1/4, so the extreme difference (4 - 3 = 1, 5 - 2 = 3) has probability 1/16 > 2.5% and
    # is the percentile interval's end; the difference of means is 4.5 - 2.5 = 2
    scores, items = _unpaired()
    (row,) = leaderboard(scores, items, B=2000, seed=2).to_dict()["sap_vs_baseline"]
    assert row["design"] == "unpaired" and row["n"] == 4
    assert row["diff"] == pytest.approx(2.0) and (row["low"], row["high"]) == (1.0, 3.0)
    # B = 0 asks for point estimates only
    (row,) = leaderboard(scores, items, B=0).to_dict()["sap_vs_baseline"]
    assert row["diff"] == pytest.approx(2.0) and row["low"] is None and row["high"] is None
    # one baseline reply: no interval, however many SAP replies there are
    (row,) = leaderboard(scores[scores["item_id"] != "d"], items,
                         B=500).to_dict()["sap_vs_baseline"]
    assert row["diff"] == pytest.approx(4.5 - 2.0) and row["low"] is None
    (row,) = leaderboard(scores[scores["item_id"] != "a"], items,
                         B=500).to_dict()["sap_vs_baseline"]
    assert row["diff"] == pytest.approx(5.0 - 2.5) and row["high"] is None


def test_leaderboard_fair_intervals_and_items_without_a_fair_score():
    # bad's fair scores 1 and 3: resampled means 1, 2, 3 (1/4, 1/2, 1/4), so the interval is
    # (1, 3); good's items have no fair score: its cells keep their items and their raw
    # means, with n 0 and no fair estimate
    fair = pd.DataFrame({"item_id": ["s1-bad", "s2-bad"], "dimension": "safety",
                         "fair_score": [1.0, 3.0]})
    res = leaderboard(_scores(), ITEMS, B=2000, seed=4, fair=fair).to_dict()
    bad = _cell(res, "bad", "all")
    assert (bad["fair_mean"], bad["fair_low"], bad["fair_high"]) == (2.0, 1.0, 3.0)
    good = _cell(res, "good", "all")
    assert good["n_items"] == 4 and good["mean"] == pytest.approx(3.875)
    assert good["fair_n"] == 0
    assert (good["fair_mean"], good["fair_low"], good["fair_high"]) == (None, None, None)


def test_leaderboard_one_resample_is_a_zero_width_interval():
    # B = 1 is allowed: the interval's ends are the one resample's mean (of 1.5 and 2.0)
    bad = _cell(leaderboard(_scores(), ITEMS, B=1, seed=0).to_dict(), "bad", "all")
    assert bad["low"] == bad["high"] and bad["low"] in (1.5, 1.75, 2.0)


# --- test–retest ------------------------------------------------------------------------------

def test_retest_alpha_follows_the_scale_level():
    first = pd.DataFrame({"item": list("abcd"), "rater": "x", "score": [1, 2, 3, 3]})
    second = pd.DataFrame({"item": list("abcd"), "rater": "x", "score": [1, 3, 3, 1]})
    nominal = retest_agreement(first, second, "nominal", [1, 2, 3]).alpha
    want = krippendorff.alpha(np.array([[1, 2, 3, 3], [1, 3, 3, 1]]),
                              level_of_measurement="nominal", value_domain=[1, 2, 3])
    assert nominal == pytest.approx(want, abs=1e-12)


# --- Cohen's kappa over rater pairs, weighted by shared items ------------------------------

def _kappa(a, b, wt=None):
    table = np.zeros((5, 5))
    for x, y in zip(a, b, strict=True):
        table[int(x) - 1, int(y) - 1] += 1
    return cohens_kappa(table, wt=wt).kappa if wt else cohens_kappa(table).kappa


def test_pair_kappa_is_weighted_by_shared_items():
    # a rated 8 items; b the first 5 of them (shared with a), c the last 3 (shared with a);
    # b and c share none, so they are not a pair.
    a = [1, 2, 3, 4, 5, 3, 2, 4]
    b = [1, 2, 3, 5, 4]
    c = [5, 1, 2]
    m = np.column_stack([a, b + [np.nan] * 3, [np.nan] * 5 + c]).astype(float)
    r = Ratings(m, tuple(range(8)), ("a", "b", "c"))
    for kind, wt in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
        k_ab, k_ac = _kappa(a[:5], b, wt), _kappa(a[5:], c, wt)
        res = pairwise_cohen(r, VALUES, kind, min_common=2)
        # (5 k_ab + 3 k_ac) / 8, not (k_ab + k_ac) / 2
        assert res.value == pytest.approx((5 * k_ab + 3 * k_ac) / 8, abs=1e-12), kind
        assert abs(res.value - (k_ab + k_ac) / 2) > 0.05
        assert (res.pairs_used, res.items) == (2, 8)
    df = pd.DataFrame([(i, rr, "empathy", m[i, j]) for i in range(8)
                       for j, rr in enumerate("abc") if not np.isnan(m[i, j])],
                      columns=["item_id", "rater", "dimension", "score"])
    res = analyze(df, {"empathy": Scale("ordinal", tuple(VALUES))},
                  options=AnalysisOptions(B=0, min_shared_items=2)).to_dict()
    ck = res["dimensions"]["empathy"]["cohen_kappa"]
    assert ck["quadratic"] == pytest.approx(
        (5 * _kappa(a[:5], b, "quadratic") + 3 * _kappa(a[5:], c, "quadratic")) / 8, abs=1e-12)


# --- the bootstrap p-value --------------------------------------------------------------------

def test_two_sided_p_by_hand():
    # k = min(#(b <= 0), #(b >= 0)); p = 2 (k + 1) / (B + 1), at most 1
    assert two_sided_p(np.array([-1.0, 1, 2, 3])) == pytest.approx(2 * 2 / 5)
    assert two_sided_p(np.array([1.0, 2, 3, 4])) == pytest.approx(2 / 5)
    assert two_sided_p(np.array([-1.0, 0, 1])) == 1.0  # 2 (2 + 1) / 4 capped
    assert two_sided_p(np.zeros(3)) == 1.0
    assert two_sided_p(np.array([np.nan, 1.0, 2.0])) == pytest.approx(2 / 3)
    assert two_sided_p(np.array([np.nan])) is None


def test_leaderboard_unpaired_row_whole_and_one_resample():
    scores, items = _unpaired()
    (row,) = leaderboard(scores, items, B=1, seed=2).to_dict()["sap_vs_baseline"]
    # one resample, as everywhere in the leaderboard: an interval of width 0 at its difference
    # (each arm's resampled mean is 4, 4.5 or 5 and 2, 2.5 or 3)
    assert set(row) == {"model", "dimension", "design", "n", "diff", "low", "high"}
    assert (row["model"], row["dimension"], row["design"], row["n"], row["diff"]) == \
        ("m", "safety", "unpaired", 4, 2.0)
    assert row["low"] == row["high"] and row["low"] in (1.0, 1.5, 2.0, 2.5, 3.0)


def test_leaderboard_flags_per_item_and_the_fair_score_explained():
    # flags given per item (no rater column): an item's share is 1 if flagged, else 0
    flags = pd.DataFrame({"item_id": ["s1-bad", "s2-bad", "s1-good-sap", "s2-good-sap"],
                          "red_flag": [True, False, False, False]})
    res = leaderboard(_scores(), ITEMS, B=2000, seed=3, flags=flags).to_dict()
    red = {r["model"]: r for r in res["red_flags"]}
    # bad: shares 1 and 0, resampled means 0, 0.5, 1 (1/4, 1/2, 1/4): interval (0, 1)
    assert red["bad"] == {"model": "bad", "n_items": 2, "share": 0.5, "low": 0.0, "high": 1.0}
    assert red["good"] == {"model": "good", "n_items": 2, "share": 0.0, "low": 0.0,
                           "high": 0.0}
    assert "adjusted" not in res
    fair = pd.DataFrame({"item_id": ["s1-bad"], "dimension": "safety", "fair_score": [2.0]})
    assert leaderboard(_scores(), ITEMS, B=0, fair=fair).to_dict()["adjusted"] == (
        "fair_mean: mean over items of the fair score from the many-facet Rasch model "
        "(expected rating by a rater of average severity); items at a scale end use FACETS' "
        "0.3-point adjustment")

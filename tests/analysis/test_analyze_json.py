"""`analyze()` in process, as `h2h analyze --json` prints it: every option reaches the number it
governs, every block has its keys, and each judge block equals the functions it is built from
called directly with the same options (so a dropped or swapped argument shows)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.alpha import alpha_bootstrap
from analysis.analyze import AnalysisOptions, Scale, analyze
from analysis.judge_agreement import aggregate_samples, judge_metrics
from analysis.layout import as_ratings

FIVE = Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))
OPT = AnalysisOptions(B=120, seed=5, ci=0.9, alpha_min=0.7, ci_method="hk", alt_epsilon=0.15,
                      alt_scoring="accuracy", margin=0.1, min_units=6, min_shared_items=3)
JUDGE_KEYS = {"pearson", "spearman", "kendall_tau_b", "mae", "rmse", "bias", "qwk",
              "linear_kappa", "exact", "within1", "alpha_humans", "alpha_with_judge",
              "self_consistency_alpha", "alt_test", "confusion", "vs_ceiling", "verdict",
              "n_judgments", "n_unscored", "n_items", "n_pairs", "n_scored_items",
              "bland_altman", "notes"}


@pytest.fixture(scope="module")
def study():
    rng = np.random.default_rng(3)
    n, k = 60, 4
    latent = rng.normal(3, 1, n)
    rows, jrows = [], []
    for i in range(n):
        for j in range(k):
            if rng.random() < 0.2:
                continue
            s = int(np.clip(np.rint(latent[i] + rng.normal(0, 0.8)), 1, 5))
            rows.append((f"it{i}", f"r{j}", "empathy", s))
        for sample in range(3):
            s = int(np.clip(np.rint(latent[i] + rng.normal(0, 0.6)), 1, 5))
            jrows.append((f"it{i}", "good", "empathy", s, sample))
        jrows.append((f"it{i}", "blank", "empathy", np.nan, 0))
        jrows.append((f"it{i}", "good", "safety", 3, 0))  # no human rated safety
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    judges = pd.DataFrame(jrows, columns=["item_id", "judge", "dimension", "score", "sample"])
    res = analyze(ratings, {"empathy": FIVE, "safety": FIVE}, judges=judges, options=OPT,
                  context={"study": "s"}).to_dict()
    return ratings, judges, res


def test_meta_records_every_option(study):
    _, _, res = study
    m = res["meta"]
    assert m["bootstrap"] == {"method": "hk", "B": 120, "seed": 5, "level": 0.9,
                              "alpha_min": 0.7}
    assert m["alt_test"] == {"epsilon": 0.15, "scoring": "accuracy"}
    assert m["verdict"]["margin"] == 0.1 and m["verdict"]["metric"] == "qwk"
    assert m["minimums"] == {"items_rated_by_2_plus": 6, "shared_items": 3}
    assert m["human_ceiling"].startswith("pooled leave-one-out")
    assert set(m["packages"]) == {"h2htalk", "numpy", "scipy", "pandas", "krippendorff"}
    assert m["study"] == "s"
    zero = analyze(study[0], {"empathy": FIVE}, options=AnalysisOptions(B=0)).to_dict()["meta"]
    assert zero["bootstrap"]["note"].startswith("bootstrap skipped (B = 0)")
    assert zero["alt_test"]["scoring"] == "by level"
    json.dumps(res, allow_nan=False)


def test_the_alpha_interval_is_the_one_asked_for(study):
    ratings, _, res = study
    d = res["dimensions"]["empathy"]
    r = as_ratings(ratings.rename(columns={"item_id": "item"}))
    want = alpha_bootstrap(r, "ordinal", B=120, seed=5, ci=0.9, alpha_min=0.7, method="hk",
                           values=FIVE.values)
    assert d["alpha_ci"] == {**want.as_dict(), "alpha_min": 0.7, "on": "ordinal"}
    assert d["alpha"]["ordinal"] == pytest.approx(want.estimate, abs=1e-12)
    assert d["status"] == "ok" and d["not_estimable"] is None
    assert (d["n_items"], d["n_raters"], d["n_cannot_rate"]) == (60, 4, 0)
    assert d["scale"] == list(FIVE.values) and d["level"] == "ordinal"
    assert d["n_items_pairable"] == int((r.matrix.shape[1] - np.isnan(r.matrix).sum(axis=1)
                                         >= 2).sum())
    assert d["cohen_pairs"]["min_items"] == 3


def test_a_judge_block_is_judge_metrics_with_the_same_options(study):
    ratings, judges, res = study
    got = res["judges"]["good"]["empathy"]
    assert JUDGE_KEYS <= set(got)
    r = as_ratings(ratings.rename(columns={"item_id": "item"}))
    js = judges[(judges["judge"] == "good") & (judges["dimension"] == "empathy")]
    per_item, samples = aggregate_samples(js.rename(columns={"item_id": "item"}), "ordinal",
                                          r.items)
    assert samples is not None and samples.shape == (60, 3)
    jm = judge_metrics(r, per_item, "ordinal", FIVE.values, samples=samples,
                       options=AnalysisOptions(alt_epsilon=0.15, alt_scoring="accuracy", B=120,
                       seed=5, ci=0.9, margin=0.1, min_units=6, min_shared_items=3, alpha_min=0.7))
    for k, v in jm.metrics.items():
        assert got[k] == (pytest.approx(v, abs=1e-12) if isinstance(v, float) else v), k
    assert got["alt_test"] == jm.alt.as_dict()
    assert got["alt_test"]["epsilon"] == 0.15 and got["alt_test"]["scoring"] == "accuracy"
    assert got["vs_ceiling"] == jm.comparison.as_dict()
    assert (got["vs_ceiling"]["B"], got["vs_ceiling"]["seed"]) == (120, 5)
    assert got["verdict"] == jm.verdict.as_dict() and got["verdict"]["margin"] == 0.1
    assert got["confusion"] == jm.confusion
    assert (got["n_judgments"], got["n_unscored"]) == (180, 0)
    assert got["self_consistency_alpha"] is not None
    assert "status" not in got


def test_judges_without_scores_or_without_humans(study):
    _, _, res = study
    blank = res["judges"]["blank"]["empathy"]
    assert blank["status"] == "no scored judgments"
    assert (blank["n_judgments"], blank["n_unscored"], blank["n_items"]) == (60, 60, 0)
    assert blank["qwk"] is None and blank["verdict"]["outcome"] == "not_estimable"
    assert "60 of 60 judgments are unscored and left out" in blank["notes"]
    assert res["judges"]["good"]["safety"] == {
        "status": "no human ratings", "notes": ["safety: no human ratings to compare with"]}
    # the dimension without ratings: a block that says so, and no ceiling
    assert res["dimensions"]["safety"]["status"] == "no ratings"
    assert res["human_ceiling"]["safety"] == {"status": "no ratings", "notes": ["no ratings"]}


def test_labels_name_the_confusion_matrix_and_many_off_scale_scores_are_summed_up():
    labels = Scale.of_labels("ordinal", ("unsafe", "borderline", "safe"))
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 3, 30)
    names = np.array(labels.labels)
    rows = [(f"i{i}", r, "safety", names[min(2, max(0, t + d))])
            for i, t in enumerate(truth) for r, d in (("x", 0), ("y", rng.integers(-1, 2)))]
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    judged = [names[t] if i >= 12 else "dangerous" for i, t in enumerate(truth)]
    judges = pd.DataFrame({"item_id": [f"i{i}" for i in range(30)], "judge": "J",
                           "dimension": "safety", "score": judged})
    res = analyze(ratings, {"safety": labels}, judges=judges,
                  options=AnalysisOptions(B=0, min_shared_items=2)).to_dict()
    j = res["judges"]["J"]["safety"]
    assert j["confusion"]["labels"] == ["unsafe", "borderline", "safe"]
    assert j["confusion"]["values"] == [1.0, 2.0, 3.0]
    off = [n for n in j["notes"] if "is not one of" in n]
    assert len(off) == 10  # the first ten are named ...
    assert "… and 2 more scores not on the scale" in j["notes"]  # ... the rest counted
    assert j["n_unscored"] == 12 and j["n_items"] == 18


def test_the_human_ceiling_block(study):
    ratings, _, res = study
    hc = res["human_ceiling"]["empathy"]
    assert hc["design"].startswith("pooled leave-one-out") and hc["left_out"] == []
    assert hc["n_humans"] == 4 and hc["qwk_ci"]["low"] < hc["qwk"] < hc["qwk_ci"]["high"]
    # a rater who shares fewer than min_shared_items items is named; too few items: nothing
    few = pd.concat([ratings, pd.DataFrame([("it0", "late", "empathy", 3),
                                            ("it1", "late", "empathy", 4)],
                                           columns=ratings.columns)])
    hc = analyze(few, {"empathy": FIVE}, options=OPT).to_dict()["human_ceiling"]["empathy"]
    assert hc["left_out"] == ["late"] and hc["n_humans"] == 4
    assert hc["notes"] == ["human ceiling: late left out (fewer than 3 items rated together "
                           "with another human)"]
    small = ratings[ratings["item_id"].isin(["it0", "it1", "it2"])]
    hc = analyze(small, {"empathy": FIVE}, options=OPT).to_dict()["human_ceiling"]["empathy"]
    assert hc["qwk"] is None and hc["mae"] is None and hc["n_items"] == 3
    assert hc["qwk_ci"] == {"low": None, "high": None} == hc["mae_ci"]
    assert any("not estimable, only 3 items rated by two or more humans (minimum 6)" in n
               for n in hc["notes"])


def test_a_dimension_that_is_not_estimable_keeps_every_key_with_nulls():
    df = pd.DataFrame([("a", "x", "e", 3), ("b", "x", "e", 4), ("a", "y", "e", 3)],
                      columns=["item_id", "rater", "dimension", "score"])
    d = analyze(df, {"e": FIVE}, options=OPT).to_dict()["dimensions"]["e"]
    assert d["status"] == "not estimable"
    assert d["alpha"] == {lv: None for lv in ("nominal", "ordinal", "interval", "ratio")}
    assert d["alpha_ci"] == {"method": "hk", "level": 0.9, "low": None, "high": None,
                             "B": 120, "seed": 5, "q_below_min": None, "alpha_min": 0.7,
                             "on": "ordinal"}
    assert d["fleiss_kappa"] is None and d["brennan_prediger"] is None
    assert d["cohen_kappa"] == {"unweighted": None, "linear": None, "quadratic": None}
    assert set(d["icc"]) == {"ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"}
    assert all(v is None for v in d["icc"].values())
    assert d["gwet"] == {"ac1": None, "ac2_linear": None, "ac2_quadratic": None}
    assert d["percent_exact"] == 1.0 and d["percent_within1"] == 1.0  # item a: 3 and 3
    assert set(d["raters"]) == {"x", "y"}
    none = analyze(df.assign(score=np.nan), {"e": FIVE}, options=OPT).to_dict()["dimensions"]["e"]
    assert none["status"] == "no ratings" and none["n_cannot_rate"] == 3
    assert none["percent_exact"] is None and none["raters"] == {}

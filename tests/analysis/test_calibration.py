"""Calibration on constructed judges whose closeness to the humans is known; leaderboard."""

from __future__ import annotations

from dataclasses import astuple, dataclass, replace

import numpy as np
import pandas as pd
import pytest

from analysis.calibration import JudgeRun, PairDifference, calibrate, compare_dimension, holm
from analysis.layout import Ratings
from analysis.leaderboard import leaderboard
from analysis.options import AnalysisOptions

VALUES = [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(21)
    n, k = 260, 5
    latent = rng.normal(3, 1.1, n)
    m = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.9, (n, k))), 1, 5)
    m[rng.random(m.shape) < 0.2] = np.nan
    humans = Ratings(m, tuple(range(n)), tuple(f"h{j}" for j in range(k)))
    close = np.clip(np.rint(latent + rng.normal(0, 0.4, n)), 1, 5)
    far = np.clip(np.rint(latent + rng.normal(0, 1.4, n)), 1, 5)
    lengths = rng.integers(30, 300, n).astype(float)
    return humans, close, far, lengths


def _pair(res, a, b, metric):
    return next(p for p in res["pairs"] if {p["a"], p["b"]} == {a, b} and p["metric"] == metric)


def test_verdict_picks_the_closer_judge_and_the_paired_ci_excludes_zero(case):
    humans, close, far, lengths = case
    res = compare_dimension("empathy", humans,
                            {"close-v2": JudgeRun(close), "far-v1": JudgeRun(far)}, "ordinal",
                            VALUES, lengths=lengths, options=AnalysisOptions(B=1000,
                                                                             seed=4)).to_dict()
    assert res["verdict"]["best"] == "close-v2"
    assert "close-v2" in res["verdict"]["text"]
    q = _pair(res, "close-v2", "far-v1", "qwk")
    sign = 1 if q["a"] == "close-v2" else -1
    assert sign * q["low"] > 0 and sign * q["high"] > 0  # CI excludes zero
    mae = _pair(res, "close-v2", "far-v1", "mae")
    assert not (mae["low"] <= 0 <= mae["high"])
    assert q["p"] < 0.01
    c = res["configs"]["close-v2"]["qwk"]
    assert c["low"] < c["value"] < c["high"]
    assert res["configs"]["far-v1"]["qwk"]["value"] < res["human_ceiling"]["qwk"]["value"]


def test_identical_configurations_are_indistinguishable(case):
    humans, close, _, _ = case
    res = compare_dimension("empathy", humans, {"a": JudgeRun(close), "b": JudgeRun(close.copy())},
                            "ordinal", VALUES, options=AnalysisOptions(B=500, seed=4)).to_dict()
    for metric in ("qwk", "alpha_with_judge", "mae"):
        p = _pair(res, "a", "b", metric)
        assert p["low"] <= 0 <= p["high"] and p["p"] == 1.0


@dataclass(frozen=True)
class _Pairs:
    """Only the pairs of a dimension's comparison (what calibrate() reads)."""

    pairs: tuple


def test_holm_across_dimensions():
    assert holm([0.01, 0.04, 0.03, None]) == [0.03, 0.06, 0.06, None]
    per_dim = {d: _Pairs((PairDifference("x", "y", "qwk", 0.1, 0.0, 0.2, p),))
               for d, p in (("empathy", 0.01), ("safety", 0.04), ("fluency", 0.03))}
    got = calibrate(per_dim)
    assert [got[d].pairs[0].p_holm for d in ("empathy", "safety", "fluency")] == \
        [0.03, 0.06, 0.06]
    assert "p_holm" in got["empathy"].pairs[0].to_dict()


def test_bias_verbosity_unscored_and_misses(case):
    humans, close, _, lengths = case
    lenient = np.clip(close + 1, 1, 5)
    verbose = np.clip(np.rint(1 + 4 * (lengths - lengths.min()) / np.ptp(lengths)), 1, 5)
    gaps = close.copy()
    gaps[:26] = np.nan
    res = compare_dimension("safety", humans,
                            {"lenient": JudgeRun(lenient), "verbose": JudgeRun(verbose),
                             "gappy": JudgeRun(gaps, n_unscored=26, n_judgments=260)},
                            "ordinal", VALUES, lengths=lengths,
                            options=AnalysisOptions(B=200, seed=1)).to_dict()
    assert res["configs"]["lenient"]["bias"] > 0.5
    v = res["configs"]["verbose"]["verbosity"]
    assert v["judge"] > 0.9 and abs(v["humans"]) < 0.2
    assert res["configs"]["gappy"]["unscored_rate"] == pytest.approx(0.1)
    m = res["configs"]["lenient"]["misses"]
    assert m["of"] > 0 and m["missed"] > 0 and "scored 2 or lower" in m["what"]
    assert any("items left out" in n or "lack a score" in n for n in res["notes"])


def test_leaderboard_orders_models_and_pairs_sap():
    rng = np.random.default_rng(2)
    items, scores = [], []
    for s in range(30):
        for model, cond, q in (("good", "sap", 4.3), ("good", "baseline", 3.3),
                               ("bad", "baseline", 2.0)):
            iid = f"{s}-{model}-{cond}"
            items.append((iid, model, cond, "dialogue", f"s{s}"))
            for r in range(3):
                scores.append((iid, f"r{r}", "safety", float(np.clip(np.rint(
                    q + rng.normal(0, 0.6)), 1, 5))))
    it = pd.DataFrame(items, columns=["item_id", "model", "condition", "task", "scenario"])
    sc = pd.DataFrame(scores, columns=["item_id", "rater", "dimension", "score"])
    flags = sc.assign(red_flag=sc["score"] <= 1)[["item_id", "rater", "red_flag"]]
    res = leaderboard(sc, it, B=500, seed=0, flags=flags).to_dict()
    allc = {c["model"]: c for c in res["cells"] if c["task"] == "all"}
    assert allc["good"]["mean"] > allc["bad"]["high"]
    sap = next(r for r in res["sap_vs_baseline"] if r["model"] == "good")
    assert sap["design"] == "paired by scenario" and sap["n"] == 30
    assert sap["low"] > 0.5 and sap["low"] < sap["diff"] < sap["high"]
    red = {r["model"]: r["share"] for r in res["red_flags"]}
    assert red["bad"] > red["good"]


def test_a_configuration_has_one_verdict_on_all_the_items_it_scored(case):
    """A judge's verdict is decided on every human-rated item it scored, not on the smaller
    set that the comparison with another configuration uses: otherwise the same judge gets
    two verdicts in one report (`h2h analyze` says one thing, the calibration another)."""
    from analysis.judge_agreement import judge_metrics

    humans, close, far, _ = case
    partial = far.copy()
    partial[:120] = np.nan  # scored 140 of the 260 items
    res = compare_dimension("empathy", humans,
                            {"close": JudgeRun(close), "partial": JudgeRun(partial)}, "ordinal",
                            VALUES, options=AnalysisOptions(B=300, seed=3,
                                                            min_shared_items=10)).to_dict()
    assert res["n_items"] == 140  # the comparison: on the items both scored
    for name, scores in (("close", close), ("partial", partial)):
        own = judge_metrics(humans, scores, "ordinal", VALUES, options=AnalysisOptions(B=300,
                            seed=3, min_shared_items=10))
        c = res["configs"][name]
        assert c["verdict"] == own.verdict.as_dict(), name
        assert c["vs_ceiling"] == own.comparison.as_dict(), name
        assert c["alt_test"] == own.alt.as_dict(), name
        assert c["verdict"]["n_items"] == c["verdict_n_items"] == own.metrics["n_items"]
    # 258 of the 260 items have two humans or more (a leave-one-out pair); 139 of the 140
    assert res["configs"]["close"]["verdict_n_items"] == 258
    assert res["configs"]["close"]["n_items"] == 139  # compared on the shared items
    # the dimension's summary names both: the items compared and the items of the verdict
    assert res["verdict"]["best"] == "close"
    assert "compared on the 139 items every configuration scored" in res["verdict"]["text"]
    assert "on the same 258 items" in res["verdict"]["text"]


def test_holm_matches_statsmodels_and_caps_at_one():
    # statsmodels' multipletests(method="holm") is the reference; sorted, 0.01 * 4 = 0.04,
    # then 0.4 * 3 = 1.2 is capped at 1, and the rest stay at 1 (step-down: never lower)
    from statsmodels.stats.multitest import multipletests

    p = [0.4, 0.01, None, 0.6, 0.45]
    want = multipletests([0.4, 0.01, 0.6, 0.45], method="holm")[1]
    got = holm(p)
    assert got[2] is None
    assert [got[i] for i in (0, 1, 3, 4)] == pytest.approx(list(want), abs=1e-15)
    assert max(v for v in got if v is not None) == 1.0


def test_calibrate_corrects_each_pair_and_metric_apart():
    # two families (judge pair a-b on QWK, a-c on QWK) across two dimensions: each is corrected
    # over its own two p-values only (a single family of four would multiply by 4, 3, ...)
    per_dim = {d: _Pairs((PairDifference("a", "b", "qwk", 0.1, 0.0, 0.2, pb),
                          PairDifference("a", "c", "qwk", 0.1, 0.0, 0.2, pc)))
               for d, pb, pc in (("empathy", 0.01, 0.04), ("safety", 0.02, 0.03))}
    out = calibrate(per_dim)
    assert [out[d].pairs[0].p_holm for d in ("empathy", "safety")] == \
        pytest.approx([0.02, 0.02])
    assert [out[d].pairs[1].p_holm for d in ("empathy", "safety")] == \
        pytest.approx([0.06, 0.06])


def test_verbosity_spearman_edges_against_scipy():
    from scipy import stats

    from analysis.calibration import _spearman

    # a missing value in one of the two drops that item only
    x = np.array([1.0, 2.0, np.nan, 4.0, 3.0])
    y = np.array([10.0, 30.0, 20.0, 40.0, np.nan])
    assert _spearman(x, y) == pytest.approx(stats.spearmanr([1, 2, 4], [10, 30, 40]).statistic)
    # three items are enough; a range of 1 is variance
    assert _spearman(np.array([3.0, 4.0, 4.0]), np.array([5.0, 6.0, 9.0])) == pytest.approx(
        stats.spearmanr([3, 4, 4], [5, 6, 9]).statistic)
    assert _spearman(np.array([5.0, 6.0, 9.0]), np.array([3.0, 4.0, 4.0])) == pytest.approx(
        stats.spearmanr([3, 4, 4], [5, 6, 9]).statistic)
    # two items, or no spread on either side: not estimable
    assert _spearman(np.array([1.0, 2.0]), np.array([1.0, 2.0])) is None
    assert _spearman(np.array([2.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0])) is None
    assert _spearman(np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])) is None


# The keys of one configuration's block, of the comparison and of the human ceiling: the
# calibration page and the report read them, so each path must give all of them.
CONFIG_KEYS = {"status", "n_items", "qwk", "alpha_with_judge", "mae", "bias", "alt_test",
               "vs_ceiling", "verdict", "self_consistency_alpha", "n_unscored", "n_judgments",
               "unscored_rate"}
COMPARISON_KEYS = {"n_items", "B", "seed", "margin", "configs", "pairs", "notes",
                   "human_ceiling", "verdict"}


def test_configurations_that_share_no_item_are_listed_not_compared(case):
    humans, close, far, _ = case
    n = humans.n_items
    a = np.where(np.arange(n) < n // 2, close, np.nan)   # the first half only
    b = np.where(np.arange(n) >= n // 2, far, np.nan)    # the second half only
    res = compare_dimension("empathy", humans,
                            {"b": JudgeRun(b, n_unscored=3, n_judgments=n), "a": JudgeRun(a),
                             "none": JudgeRun(np.full(n, np.nan))},
                            "ordinal", VALUES, options=AnalysisOptions(B=7, seed=3,
                                                                       margin=0.1)).to_dict()
    assert set(res) == COMPARISON_KEYS
    assert (res["n_items"], res["B"], res["seed"], res["margin"]) == (0, 7, 3, 0.1)
    assert res["pairs"] == [] and list(res["configs"]) == ["a", "b", "none"]
    assert res["human_ceiling"] == {"qwk": {"value": None, "low": None, "high": None}}
    for name in ("a", "b"):
        cfg = res["configs"][name]
        assert set(cfg) == CONFIG_KEYS
        assert cfg["status"] == "no item scored by every configuration"
        assert cfg["verdict"]["margin"] == 0.1
        assert "no item scored by every configuration on this dimension" in \
            cfg["verdict"]["text"]
    assert res["configs"]["b"]["unscored_rate"] == pytest.approx(3 / n)
    assert res["configs"]["none"]["status"] == "no scored judgments"
    assert res["verdict"]["best"] is None and res["verdict"]["outcome"] == "not_estimable"
    assert res["verdict"]["text"] == \
        "empathy: no verdict — no configuration has scored judgments here."
    assert res["configs"]["a"]["verdict"]["reasons"] == \
        ["no item scored by every configuration on this dimension"]
    assert any("share no scored item" in x for x in res["notes"])
    assert any(x == "none: no scored judgments on empathy" for x in res["notes"])


def test_every_path_gives_every_key_and_the_options_travel(case):
    humans, close, _, _ = case
    res = compare_dimension("empathy", humans,
                            {"a": JudgeRun(close), "none": JudgeRun(np.full(len(close), np.nan))},
                            "ordinal", VALUES, options=AnalysisOptions(B=0, seed=9,
                                                                       margin=0.07)).to_dict()
    assert set(res) == COMPARISON_KEYS
    assert (res["B"], res["seed"], res["margin"]) == (0, 9, 0.07)
    assert set(res["configs"]["none"]) == CONFIG_KEYS
    assert CONFIG_KEYS <= set(res["configs"]["a"])
    assert set(res["human_ceiling"]) == {"qwk", "mae", "spearman", "exact", "n_items",
                                         "n_pairs", "alpha_humans"}
    assert set(res["human_ceiling"]["qwk"]) == {"value", "low", "high"}
    # B = 0: point estimates only, no interval anywhere
    for metric in ("qwk", "alpha_with_judge", "mae"):
        assert res["configs"]["a"][metric]["low"] is None
        assert res["configs"]["a"][metric]["value"] is not None


def test_misses_by_hand_on_a_binary_and_an_ordinal_scale():
    from analysis.calibration import _misses

    nan = np.nan
    # binary (0/1, 1 = flagged)
    m = np.array([[1, 1], [1, 0], [0, 0], [1, 1], [nan, nan], [1, nan]])
    judge = np.array([1, 0, 1, 0, 1, nan])
    r = Ratings(m, tuple(range(6)), ("h1", "h2"))
    missed, flagged, what = astuple(_misses(r, judge, [0.0, 1.0], binary=True))
    # lower medians: item0 1, item1 0 (lower of 0 and 1), item2 0, item3 1, item4 none,
    # item5 1 (judge did not score it). Flagged and judged: items 0 and 3; the judge missed 3
    assert (missed, flagged, what) == (1, 2, "items the humans flagged")
    # ordinal 1..5: "low" is the scale's second value, 2; lower medians 1, 2, 4, (none)
    m = np.array([[1, 2], [2, 3], [4, 4], [nan, nan]])
    judge = np.array([3, 2, 1, 1])
    r = Ratings(m, tuple(range(4)), ("h1", "h2"))
    missed, flagged, what = astuple(_misses(r, judge, VALUES, binary=False))
    # items 0 and 1 are at 2 or lower; the judge gave item 0 a 3 (missed), item 1 a 2
    assert (missed, flagged) == (1, 2) and what == "items the humans scored 2 or lower"


# --- every option reaches every number, on items some configurations skip -----------------

OPTS = AnalysisOptions(B=120, seed=5, ci=0.90, margin=0.1, min_units=4, min_shared_items=6,
                       alt_epsilon=0.15, alt_scoring="accuracy", alpha_min=0.9)


@pytest.fixture(scope="module")
def uneven():
    """62 items: h0–h2 rate items 0–59, h3 only items 0–3 (fewer than min_shared_items = 6
    shared), item 50 has one human only, items 60–61 none. Configuration a scores every item
    (with three samples each), b all but items 5–9, c only the two items no human rated."""
    rng = np.random.default_rng(17)
    n = 62
    lat = rng.normal(3, 1.1, n)
    m = np.clip(np.rint(lat[:, None] + rng.normal(0, 0.8, (n, 4))), 1, 5)
    m[4:, 3] = np.nan
    m[60:] = np.nan
    m[50, 1:] = np.nan
    humans = Ratings(m, tuple(range(n)), ("h0", "h1", "h2", "h3"))
    a = np.clip(np.rint(lat + rng.normal(0, 0.5, n)), 1, 5)
    sa = np.column_stack([a, np.clip(a + rng.integers(-1, 2, n), 1, 5),
                          np.clip(a + rng.integers(-1, 2, n), 1, 5)])
    b = np.clip(np.rint(lat + rng.normal(0, 0.9, n)), 1, 5)
    b[5:10] = np.nan
    sb = np.column_stack([b, np.clip(b + rng.integers(-1, 2, n), 1, 5), b])
    c = np.full(n, np.nan)
    c[60:] = 3.0
    runs = {"a": JudgeRun(a, sa, n_unscored=0, n_judgments=186),
            "b": JudgeRun(b, sb, n_unscored=15, n_judgments=186),
            "c": JudgeRun(c, None, n_unscored=180, n_judgments=186)}
    return humans, runs


def _width(d: dict) -> float:
    return d["high"] - d["low"]


def test_every_option_reaches_every_number(uneven):
    import krippendorff

    from analysis.ceiling import loo_pairs, pooled_metrics
    from analysis.judge_agreement import agreement_block, judge_metrics

    humans, runs = uneven
    m = humans.matrix
    res = compare_dimension("empathy", humans, runs, "ordinal", VALUES, options=OPTS).to_dict()
    common = np.zeros(62, bool)
    common[:60] = True
    common[5:10] = False
    assert res["n_items"] == 55 and (res["B"], res["seed"], res["margin"]) == (120, 5, 0.1)
    assert res["notes"] == ["5 human-rated items lack a score from some configuration and are "
                            "left out of the comparison", "c: no scored judgments on empathy"]
    assert res["configs"]["c"]["status"] == "no scored judgments"
    assert res["verdict"]["text"].startswith("empathy: best configuration ")
    # the ceiling: leave-one-out pairs on the common items, h3 left out (4 shared items < 6)
    want = pooled_metrics(loo_pairs(m, rows=common, min_shared_items=6))
    assert res["human_ceiling"]["qwk"]["value"] == pytest.approx(want["qwk"], abs=1e-12)
    assert want["qwk"] != pytest.approx(pooled_metrics(loo_pairs(m, rows=common))["qwk"])
    assert want["qwk"] != pytest.approx(pooled_metrics(loo_pairs(m, min_shared_items=6))["qwk"])
    assert res["human_ceiling"]["n_items"] == 54  # item 50 has one human: no pair
    opts = OPTS
    for name in ("a", "b"):
        run, cfg = runs[name], res["configs"][name]
        # the verdict, the test and the comparison with the ceiling are the configuration's
        # own, on every human-rated item it scored, with the options given
        own = agreement_block(judge_metrics(humans, run.scores, "ordinal", VALUES,
                                            samples=run.samples, options=opts)).to_dict()
        assert cfg["verdict"] == own["verdict"] and cfg["alt_test"] == own["alt_test"]
        assert cfg["vs_ceiling"] == own["vs_ceiling"]
        assert cfg["verdict"]["margin"] == 0.1
        assert (cfg["alt_test"]["epsilon"], cfg["alt_test"]["scoring"]) == (0.15, "accuracy")
        assert (cfg["n_unscored"], cfg["n_judgments"]) == (run.n_unscored, 186)
        assert cfg["unscored_rate"] == pytest.approx(run.n_unscored / 186)
        # alpha with the judge as one more rater, on the common items (krippendorff package)
        js = run.scores[common]
        assert cfg["alpha_with_judge"]["value"] == pytest.approx(krippendorff.alpha(
            reliability_data=np.column_stack([m[common], js]).T,
            level_of_measurement="ordinal", value_domain=VALUES), abs=1e-9)
    a, b = res["configs"]["a"], res["configs"]["b"]
    # items with a leave-one-out pair (two or more humans; item 50 has one): a's verdict is
    # on the 59 of its own, the comparison on the 54 of the common items
    assert (a["verdict_n_items"], a["n_items"]) == (59, 54)
    assert (b["verdict_n_items"], b["n_items"]) == (54, 54)
    # a scored more items than b: its comparison block is on the common items only, so its
    # self-consistency is that of its samples there; b's block is its own
    assert a["self_consistency_alpha"] == pytest.approx(krippendorff.alpha(
        reliability_data=runs["a"].samples[common].T, level_of_measurement="ordinal",
        value_domain=VALUES), abs=1e-9)
    own_b = agreement_block(judge_metrics(humans, runs["b"].scores, "ordinal", VALUES,
                                          samples=runs["b"].samples, options=opts)).to_dict()
    assert b["self_consistency_alpha"] == pytest.approx(own_b["self_consistency_alpha"])
    assert b["mae"]["value"] == pytest.approx(own_b["mae"])
    assert (b["qwk"]["low"], b["qwk"]["high"]) == (own_b["vs_ceiling"]["judge_qwk"]["low"],
                                                   own_b["vs_ceiling"]["judge_qwk"]["high"])
    # the level of the intervals is the one asked for: 90% is narrower than 95%
    wide = compare_dimension("empathy", humans, runs, "ordinal", VALUES,
                             options=replace(OPTS, ci=0.95)).to_dict()
    for name in ("a", "b"):
        for metric in ("mae", "alpha_with_judge"):
            assert _width(res["configs"][name][metric]) < \
                _width(wide["configs"][name][metric]), (name, metric)
    assert len(res["pairs"]) == 3
    for p, w in zip(res["pairs"], wide["pairs"], strict=True):
        assert p["metric"] == w["metric"] and _width(p) < _width(w)
        va, vb = res["configs"][p["a"]][p["metric"]]["value"], \
            res["configs"][p["b"]][p["metric"]]["value"]
        assert p["diff"] == pytest.approx(va - vb)


def test_known_blocks_are_used_only_when_they_cover_the_same_items(uneven):
    from analysis.judge_agreement import agreement_block, judge_metrics

    humans, runs = uneven
    own_b = agreement_block(judge_metrics(humans, runs["b"].scores, "ordinal", VALUES,
                                          samples=runs["b"].samples, options=OPTS))
    assert own_b.n_scored_items == 55
    marker = replace(own_b.verdict, reasons=("from h2h analyze",))
    known = {"b": replace(own_b, verdict=marker, mae=9.99)}
    res = compare_dimension("empathy", humans, runs, "ordinal", VALUES, known=known,
                            options=OPTS).to_dict()
    assert res["configs"]["b"]["verdict"]["reasons"] == ["from h2h analyze"]
    assert res["configs"]["b"]["mae"]["value"] == 9.99
    # a block computed on other items (here: one item fewer) is not taken
    stale = {"b": replace(known["b"], n_scored_items=54)}
    res = compare_dimension("empathy", humans, runs, "ordinal", VALUES, known=stale,
                            options=OPTS).to_dict()
    assert res["configs"]["b"]["verdict"] == own_b.verdict.as_dict()
    assert res["configs"]["b"]["mae"]["value"] == pytest.approx(own_b.mae)


def test_called_without_options_it_gives_h2h_analyzes_defaults():
    # 10 items rated by three humans (each shares exactly 10 items: min_shared_items), a judge
    # that scored 5 of them (exactly min_units): called without options, compare_dimension
    # gives what h2h analyze's defaults give, spelt out
    rng = np.random.default_rng(8)
    lat = rng.integers(1, 6, 10)
    m = np.clip(lat[:, None] + rng.integers(-1, 2, (10, 3)), 1, 5).astype(float)
    humans = Ratings(m, tuple(range(10)), ("h1", "h2", "h3"))
    judge = np.where(np.arange(10) < 5, np.clip(lat + 0.0, 1, 5), np.nan)
    runs = {"j": JudgeRun(judge)}
    o = AnalysisOptions()
    spelt = compare_dimension("empathy", humans, runs, "ordinal", VALUES, options=o).to_dict()
    assert compare_dimension("empathy", humans, runs, "ordinal", VALUES).to_dict() == spelt
    assert (spelt["B"], spelt["seed"]) == (1000, 0)
    # every human kept (chosen on all 10 items), on the 5 compared items: 3 × 5 pairs
    assert spelt["human_ceiling"]["n_pairs"] == 15
    assert spelt["configs"]["j"]["verdict"]["n_items"] == 5
    assert spelt["configs"]["j"]["verdict"]["outcome"] != "not_estimable"  # 5 items suffice
    # one more item asked for than the judge scored: no verdict, for that reason
    six = compare_dimension("empathy", humans, runs, "ordinal", VALUES,
                            options=AnalysisOptions(min_units=6)).to_dict()
    assert six["configs"]["j"]["verdict"]["outcome"] == "not_estimable"


def test_bootstrap_edges_two_items_three_for_verbosity_and_no_pairs_without_resamples():
    m = np.array([[1, 2], [4, 5], [3, 3], [2, 2]], float)
    humans = Ratings(m, tuple(range(4)), ("h1", "h2"))
    x = np.array([1, 5, 3, np.nan])
    y = np.array([2, 4, np.nan, np.nan])
    runs = {"x": JudgeRun(x), "y": JudgeRun(y)}
    lengths = np.array([10.0, 50.0, 30.0, 20.0])
    two = compare_dimension("empathy", humans, runs, "ordinal", VALUES, lengths=lengths,
                            options=AnalysisOptions(B=50, min_shared_items=2)).to_dict()
    assert two["n_items"] == 2 and len(two["pairs"]) == 3    # two items can be resampled
    assert "verbosity" not in two["configs"]["x"]            # but ρ needs three
    three = compare_dimension("empathy", humans, {"x": JudgeRun(x)}, "ordinal", VALUES,
                              lengths=lengths, options=AnalysisOptions(B=50,
                                                                       min_shared_items=2)).to_dict()
    assert three["n_items"] == 3
    assert three["configs"]["x"]["verbosity"] == {"judge": pytest.approx(1.0),
                                                  "humans": pytest.approx(1.0)}
    # B = 0: no resamples, so no intervals and no paired differences; B = 1 is a resample
    # (paired differences are listed) but no interval (a percentile needs two)
    none = compare_dimension("empathy", humans, runs, "ordinal", VALUES,
                             options=AnalysisOptions(B=0, min_shared_items=2)).to_dict()
    assert none["pairs"] == [] and none["configs"]["x"]["mae"]["low"] is None
    one = compare_dimension("empathy", humans, runs, "ordinal", VALUES, options=AnalysisOptions(B=1,
                            min_shared_items=2)).to_dict()
    assert len(one["pairs"]) == 3 and one["pairs"][0]["low"] is None
    assert one["configs"]["x"]["mae"]["low"] is None
    # all configurations score every human-rated item: nothing is said to be left out
    full = compare_dimension("empathy", humans, {"x": JudgeRun(np.array([1, 5, 3, 2.0]))},
                             "ordinal", VALUES, options=AnalysisOptions(B=0,
                                                                        min_shared_items=2)).to_dict()
    assert not any("left out" in n for n in full["notes"])


def test_misses_follow_the_binary_flag():
    m = np.array([[1, 1], [1, 1], [0, 0], [1, 0], [0, 0]], float)
    humans = Ratings(m, tuple(range(5)), ("h1", "h2"))
    judge = np.array([1, 0, 0, 0, 1], float)
    res = compare_dimension("safety", humans, {"j": JudgeRun(judge)}, "nominal", [0.0, 1.0],
                            binary=True, options=AnalysisOptions(B=0, min_shared_items=2)).to_dict()
    # flagged by the humans (lower median 1): items 0 and 1; the judge missed item 1
    assert res["configs"]["j"]["misses"] == {"missed": 1, "of": 2,
                                             "what": "items the humans flagged"}


def test_edges_single_human_items_undefined_metrics_and_the_no_scores_record():
    # a configuration that scored only an item one human rated is compared (on no pair)
    m = np.array([[2, np.nan], [1, 1], [2, 3], [3, 3], [4, 5]], float)
    humans = Ratings(m, tuple(range(5)), ("h1", "h2"))
    only = np.array([2, np.nan, np.nan, np.nan, np.nan])
    res = compare_dimension("empathy", humans, {"j": JudgeRun(only)}, "ordinal", VALUES,
                            options=AnalysisOptions(B=20, min_shared_items=2)).to_dict()
    cfg = res["configs"]["j"]
    assert cfg["status"] == "ok" and res["n_items"] == 1
    assert cfg["vs_ceiling"] is None and cfg["qwk"]["low"] is None
    # nobody varies: alpha with the judge is undefined for both configurations, and so is
    # their difference
    flat = Ratings(np.full((4, 2), 3.0), tuple(range(4)), ("h1", "h2"))
    res = compare_dimension("empathy", flat,
                            {"x": JudgeRun(np.full(4, 3.0)), "y": JudgeRun(np.full(4, 3.0))},
                            "ordinal", VALUES, options=AnalysisOptions(B=20,
                                                                       min_shared_items=2)).to_dict()
    assert res["configs"]["x"]["alpha_with_judge"]["value"] is None
    pair = _pair(res, "x", "y", "alpha_with_judge")
    assert pair["diff"] is None
    assert res["human_ceiling"]["alpha_humans"] is None
    # one configuration varies (its alpha is defined), the other does not: no difference
    res = compare_dimension("empathy", flat,
                            {"x": JudgeRun(np.full(4, 3.0)),
                             "y": JudgeRun(np.array([1.0, 5.0, 3.0, 2.0]))},
                            "ordinal", VALUES, options=AnalysisOptions(B=20,
                                                                       min_shared_items=2)).to_dict()
    assert res["configs"]["y"]["alpha_with_judge"]["value"] is not None
    assert _pair(res, "x", "y", "alpha_with_judge")["diff"] is None
    # a configuration without scores: the whole verdict record says why
    none = compare_dimension("empathy", humans, {"j": JudgeRun(np.full(5, np.nan))}, "ordinal",
                             VALUES, options=AnalysisOptions(B=0, margin=0.08)
                             ).to_dict()["configs"]["j"]["verdict"]
    assert none == {"outcome": "not_estimable", "phrase": "no verdict",
                    "text": "no verdict — no scored judgments on this dimension.",
                    "reasons": ["no scored judgments on this dimension"], "margin": 0.08,
                    "items_needed": None, "n_items": 0, "humans_unreliable": None}


def test_misses_count_single_human_items_and_the_judges_misses_only():
    from analysis.calibration import _misses

    nan = np.nan
    # binary: items 0-2 flagged by the humans (item 2 by its only rater); the judge flags
    # items 0 and 1 and misses item 2; item 3 is not flagged
    m = np.array([[1, 1], [1, 1], [1, nan], [0, 0]], float)
    r = Ratings(m, tuple(range(4)), ("h1", "h2"))
    assert astuple(_misses(r, np.array([1, 1, 0, 1.0]), [0.0, 1.0], binary=True)) == \
        (1, 3, "items the humans flagged")

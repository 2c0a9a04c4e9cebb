"""Calibration on constructed judges whose closeness to the humans is known; leaderboard."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.calibration import JudgeRun, calibrate, compare_dimension, holm
from analysis.layout import Ratings
from analysis.leaderboard import leaderboard

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
    res = compare_dimension("empathy", humans, {"close-v2": JudgeRun(close),
                                                "far-v1": JudgeRun(far)},
                            "ordinal", VALUES, lengths=lengths, B=1000, seed=4)
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
    res = compare_dimension("empathy", humans, {"a": JudgeRun(close),
                                                "b": JudgeRun(close.copy())},
                            "ordinal", VALUES, B=500, seed=4)
    for metric in ("qwk", "alpha_with_judge", "mae"):
        p = _pair(res, "a", "b", metric)
        assert p["low"] <= 0 <= p["high"] and p["p"] == 1.0


def test_holm_across_dimensions():
    assert holm([0.01, 0.04, 0.03, None]) == [0.03, 0.06, 0.06, None]
    per_dim = {d: {"pairs": [{"a": "x", "b": "y", "metric": "qwk", "p": p}]}
               for d, p in (("empathy", 0.01), ("safety", 0.04), ("fluency", 0.03))}
    calibrate(per_dim)
    assert [per_dim[d]["pairs"][0]["p_holm"] for d in ("empathy", "safety", "fluency")] == \
        [0.03, 0.06, 0.06]


def test_bias_verbosity_unscored_and_misses(case):
    humans, close, _, lengths = case
    lenient = np.clip(close + 1, 1, 5)
    verbose = np.clip(np.rint(1 + 4 * (lengths - lengths.min()) / np.ptp(lengths)), 1, 5)
    gaps = close.copy()
    gaps[:26] = np.nan
    res = compare_dimension("safety", humans, {"lenient": JudgeRun(lenient),
                                               "verbose": JudgeRun(verbose),
                                               "gappy": JudgeRun(gaps, n_unscored=26,
                                                                 n_judgments=260)},
                            "ordinal", VALUES, lengths=lengths, B=200, seed=1)
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
    res = leaderboard(sc, it, B=500, seed=0, flags=flags)
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
    from analysis.judge import judge_metrics

    humans, close, far, _ = case
    partial = far.copy()
    partial[:120] = np.nan  # scored 140 of the 260 items
    res = compare_dimension("empathy", humans, {"close": JudgeRun(close),
                                                "partial": JudgeRun(partial)},
                            "ordinal", VALUES, B=300, seed=3, min_human_items=10)
    assert res["n_items"] == 140  # the comparison: on the items both scored
    for name, scores in (("close", close), ("partial", partial)):
        own = judge_metrics(humans, scores, "ordinal", VALUES, B=300, seed=3,
                            min_human_items=10)
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

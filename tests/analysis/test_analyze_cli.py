"""`h2h analyze` as the black-box interface: JSON layout, nulls with notes, CSV validation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.analyze import AnalysisOptions, Scale, analyze
from tests.helpers import run_h2h

pytestmark = pytest.mark.integration  # left out of `make test-fast`

DIM_KEYS = {"n_items", "n_raters", "n_ratings", "alpha", "alpha_ci", "fleiss_kappa",
            "cohen_kappa", "icc", "gwet", "brennan_prediger", "percent_exact",
            "percent_within1", "raters", "notes"}
JUDGE_KEYS = {"pearson", "spearman", "kendall_tau_b", "mae", "rmse", "bias", "qwk",
              "linear_kappa", "exact", "within1", "alpha_humans", "alpha_with_judge",
              "self_consistency_alpha", "alt_test", "notes"}


def _write_study(tmp_path, n=120, k=4, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(3, 1, n)
    rows, jrows = [], []
    for i in range(n):
        for j in range(k):
            if rng.random() < 0.15:
                continue
            for dim in ("empathy", "safety"):
                s = int(np.clip(np.rint(latent[i] + rng.normal(0, 0.8)), 1, 5))
                rows.append((f"it{i}", f"rater{j}", dim, s))
        for dim in ("empathy", "safety"):
            for sample in range(3):
                s = int(np.clip(np.rint(latent[i] + rng.normal(0, 0.5)), 1, 5))
                jrows.append((f"it{i}", "judge-a", dim, s, sample))
            jrows.append((f"it{i}", "judge-b", dim, int(rng.integers(1, 6)), 0))
    r = tmp_path / "ratings.csv"
    pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"]).to_csv(r, index=False)
    jf = tmp_path / "judges.csv"
    pd.DataFrame(jrows, columns=["item_id", "judge", "dimension", "score", "sample"]).to_csv(
        jf, index=False)
    return r, jf


def h2h(*args):
    return run_h2h(*args, check=False)


def test_json_layout_and_values(tmp_path):
    r, jf = _write_study(tmp_path)
    proc = h2h("analyze", "--ratings", str(r), "--judges", str(jf), "--bootstrap", "300",
               "--seed", "5", "--scale", "empathy=1..5", "--scale", "safety=1..5", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)  # strict JSON: NaN would not parse back as a number
    assert set(res) >= {"dimensions", "judges", "human_ceiling", "meta"}
    for dim in ("empathy", "safety"):
        d = res["dimensions"][dim]
        assert DIM_KEYS <= set(d)
        assert set(d["alpha"]) == {"nominal", "ordinal", "interval", "ratio"}
        assert set(d["alpha_ci"]) >= {"method", "level", "low", "high", "B", "seed",
                                      "q_below_min"}
        assert d["alpha_ci"]["B"] == 300 and d["alpha_ci"]["seed"] == 5
        assert set(d["cohen_kappa"]) == {"unweighted", "linear", "quadratic"}
        assert set(d["icc"]) == {"ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"}
        assert all(set(v) == {"value", "low", "high", "why_no_ci"} for v in d["icc"].values())
        assert set(d["gwet"]) == {"ac1", "ac2_linear", "ac2_quadratic"}
        for rater in d["raters"].values():
            assert set(rater) == {"n", "mean", "sd", "alpha_without", "corr_with_others"}
        for judge in ("judge-a", "judge-b"):
            jm = res["judges"][judge][dim]
            assert JUDGE_KEYS <= set(jm)
            assert set(jm["alt_test"]) >= {"epsilon", "winning_rate", "advantage_prob",
                                           "passed"}
        assert JUDGE_KEYS - {"alpha_humans", "alpha_with_judge", "self_consistency_alpha",
                             "alt_test", "notes"} <= set(res["human_ceiling"][dim])
    a, b = res["judges"]["judge-a"]["empathy"], res["judges"]["judge-b"]["empathy"]
    assert a["qwk"] > res["human_ceiling"]["empathy"]["qwk"] > b["qwk"]
    assert a["self_consistency_alpha"] > 0.5 and b["self_consistency_alpha"] is None
    # the same numbers as the Python interface
    ratings = pd.read_csv(r)
    direct = analyze(ratings, {d: Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))
                               for d in ("empathy", "safety")},
                     judges=pd.read_csv(jf), options=AnalysisOptions(B=300, seed=5)).to_dict()
    assert direct["dimensions"]["empathy"]["alpha"] == res["dimensions"]["empathy"]["alpha"]
    assert direct["dimensions"]["empathy"]["alpha_ci"]["low"] == \
        res["dimensions"]["empathy"]["alpha_ci"]["low"]


def test_what_cannot_be_computed_is_null_with_a_note():
    df = pd.DataFrame({"item_id": ["a", "b", "c", "a"], "rater": ["x", "x", "x", "y"],
                       "dimension": ["empathy", "empathy", "empathy", "safety"],
                       "score": [3, 4, 5, 2]})
    res = analyze(df, {"empathy": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0)),
                       "safety": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))},
                  options=AnalysisOptions(B=50)).to_dict()
    emp = res["dimensions"]["empathy"]
    assert emp["alpha"]["ordinal"] is None and emp["alpha_ci"]["low"] is None
    assert emp["icc"]["ICC2"] is None and emp["fleiss_kappa"] is None
    # the reason is stated once, not once per coefficient that it makes undefined
    assert emp["notes"] == ["fewer than 2 raters: agreement cannot be computed"]
    assert emp["not_estimable"] == emp["notes"][0] and emp["status"] == "not estimable"
    json.dumps(res, allow_nan=False)


def test_readable_table_and_bad_csv(tmp_path):
    r, _ = _write_study(tmp_path, n=40)
    proc = h2h("analyze", "--ratings", str(r), "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    assert "Krippendorff α (ordinal)" in proc.stdout
    assert any(band in proc.stdout for band in ("reliable (≥ .800)", "tentative (≥ .667)",
                                                "unreliable (< .667)"))
    assert any(band in proc.stdout for band in ("moderate (≤ 0.60)", "substantial (≤ 0.80)",
                                                "almost perfect (> 0.80)", "fair (≤ 0.40)"))
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,rater,dimension,score\na,x,empathy,4\nb,x,empathy,high\n",
                   encoding="utf-8")
    proc = h2h("analyze", "--ratings", str(bad))
    assert proc.returncode == 1
    assert "bad.csv:3: field 'score': 'high' is not a number" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_analyze_reads_the_study_database(tmp_path, demo_template):
    db = demo_template.copy_to(tmp_path)
    proc = h2h("analyze", "--db", str(db), "--bootstrap", "200", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert list(res["dimensions"]) == ["empathy", "safety", "fluency", "memory_fidelity",
                                       "plan_quality"]
    assert res["meta"]["rubric"]["version"] and len(res["meta"]["simulated_raters"]) == 6
    assert res["dimensions"]["memory_fidelity"]["n_items"] == 48

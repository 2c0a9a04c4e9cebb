"""Numbers that mean nothing are not printed as numbers (issue 9 §2): one item, too few items,
no variance, a dimension without ratings, a judge without scored judgments, undefined kappa
pairs, and the explanation of the judge table's brackets."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.analyze import AnalysisOptions, Scale, analyze
from tests.helpers import H2HResult, item, jsonl, run_h2h

S5 = Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))
COEFFICIENTS = ("alpha", "fleiss_kappa", "cohen_kappa", "icc", "gwet", "brennan_prediger")


def h2h(*args: str) -> H2HResult:
    return run_h2h(*args, check=False)


def _long(rows, dim="empathy"):
    return pd.DataFrame([(i, r, dim, s) for i, r, s in rows],
                        columns=["item_id", "rater", "dimension", "score"])


def _all_none(d: dict) -> bool:
    def nones(v):
        return all(nones(x) for x in v.values()) if isinstance(v, dict) else v is None
    return all(nones(d[k]) for k in COEFFICIENTS)


def test_one_item_is_not_estimable_with_one_reason(tmp_path):
    df = _long([("a", "x", 3), ("a", "y", 4), ("a", "z", 3)])
    res = analyze(df, {"empathy": S5}, options=AnalysisOptions(B=50)).to_dict()
    d = res["dimensions"]["empathy"]
    # today: alpha 0.000 with CI [0, 0] and "unreliable"
    assert _all_none(d) and d["alpha_ci"]["low"] is None and d["alpha_ci"]["high"] is None
    assert d["status"] == "not estimable"
    assert d["notes"] == ["only 1 item rated by two or more raters (minimum 5): alpha, kappa, "
                          "AC1/AC2 and ICC are not estimable"]
    f = tmp_path / "one.csv"
    df.to_csv(f, index=False)
    proc = h2h("analyze", "--ratings", str(f), "--scale", "empathy=1..5", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    assert "Krippendorff α (ordinal)" in proc.stdout and "not estimable" in proc.stdout
    assert "0.000" not in proc.stdout and "unreliable" not in proc.stdout


def test_the_minimum_of_pairable_items_is_an_option():
    rows = [(f"i{i}", r, s) for i, (a, b) in enumerate([(1, 2), (2, 2), (3, 4), (5, 4)])
            for r, s in (("x", a), ("y", b))]
    df = _long(rows)
    assert analyze(df, {"empathy": S5}, options=AnalysisOptions(B=0)).to_dict()["dimensions"][
        "empathy"]["alpha"]["ordinal"] is None
    d = analyze(df, {"empathy": S5}, options=AnalysisOptions(B=0,
                                                             min_units=4)).to_dict()["dimensions"][
        "empathy"]
    assert d["alpha"]["ordinal"] is not None and d["status"] == "ok"


def test_no_variance_gives_exact_agreement_one_and_a_single_reason(tmp_path):
    rows = [(f"i{i}", r, 4) for i in range(10) for r in ("x", "y", "z")]
    df = _long(rows)
    # declared scale 1..5: AC1 and Brennan–Prediger are defined (= 1)
    d = analyze(df, {"empathy": S5},
                options=AnalysisOptions(B=50)).to_dict()["dimensions"]["empathy"]
    assert d["percent_exact"] == 1.0 and d["percent_within1"] == 1.0
    assert d["alpha"]["ordinal"] is None and d["cohen_kappa"]["quadratic"] is None
    assert d["icc"]["ICC2"] is None and d["fleiss_kappa"] is None
    assert d["gwet"]["ac1"] == pytest.approx(1.0) and d["brennan_prediger"] == pytest.approx(1.0)
    assert d["status"] == "no variance"
    assert d["notes"] == ["every rating is 4: alpha, kappa and ICC are undefined (no "
                          "variance); percent agreement, AC1 and Brennan–Prediger are 1"]
    # a plain CSV without --scale: the scale is the one observed value
    f = tmp_path / "const.csv"
    df.to_csv(f, index=False)
    proc = h2h("analyze", "--ratings", str(f), "--bootstrap", "50", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)["dimensions"]["empathy"]
    assert d["percent_exact"] == 1.0 and d["percent_within1"] == 1.0  # today: null and 1.0
    assert len(d["notes"]) == 1 and "every rating is 4" in d["notes"][0]


def test_a_dimension_without_ratings_says_so_in_the_tables(tmp_path):
    rows = [(f"i{i}", r, s) for i in range(8) for r, s in (("x", 1 + i % 5), ("y", 1 + i % 4))]
    f = tmp_path / "r.csv"
    _long(rows).to_csv(f, index=False)
    proc = h2h("analyze", "--ratings", str(f), "--scale", "empathy=1..5", "--scale",
               "safety=1..5", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    assert "safety: no ratings" in proc.stdout
    overview = proc.stdout.split("empathy:")[0]
    assert "safety" in overview and "no ratings" in overview


def test_a_rubric_dimension_without_ratings_in_the_study(tmp_path):
    db = str(tmp_path / "s.db")
    assert h2h("init", "--db", db, "--name", "S").returncode == 0
    items = tmp_path / "items.jsonl"
    items.write_text(jsonl(*(item(f"d{i}") for i in range(6))), encoding="utf-8")
    assert h2h("import", "items", str(items), "--db", db).returncode == 0
    ratings = tmp_path / "r.csv"
    ratings.write_text("item_id,rater,dimension,score\n" + "".join(
        f"d{i},{r},empathy,{1 + (i + j) % 5}\n" for i in range(6)
        for j, r in enumerate(("ann", "bob"))), encoding="utf-8")
    assert h2h("import", "ratings", str(ratings), "--db", db, "--add-raters").returncode == 0
    res = json.loads(h2h("analyze", "--db", db, "--bootstrap", "50", "--json").stdout)
    assert res["dimensions"]["safety"]["status"] == "no ratings"
    assert res["dimensions"]["safety"]["n_ratings"] == 0
    assert res["human_ceiling"]["safety"]["status"] == "no ratings"
    text = h2h("analyze", "--db", db, "--bootstrap", "50").stdout
    assert "safety: no ratings" in text and "fluency: no ratings" in text


def _study(n=60, k=3, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(3, 1, n)
    rows = [(f"i{i}", f"r{j}", float(np.clip(np.rint(latent[i] + rng.normal(0, .6)), 1, 5)))
            for i in range(n) for j in range(k)]
    return _long(rows), latent


def test_a_judge_without_scored_judgments_has_no_qwk_and_no_alpha(tmp_path):
    df, latent = _study()
    judges = pd.DataFrame({"item_id": [f"i{i}" for i in range(60)], "judge": "mute",
                           "dimension": "empathy", "score": np.nan})
    res = analyze(df, {"empathy": S5}, judges=judges, options=AnalysisOptions(B=100)).to_dict()
    m = res["judges"]["mute"]["empathy"]
    # today: alpha_with_judge repeated the humans' alpha, and h2h calibrate crashed
    assert m["status"] == "no scored judgments"
    assert m["qwk"] is None and m["alpha_with_judge"] is None and m["mae"] is None
    assert m["alpha_humans"] == pytest.approx(res["dimensions"]["empathy"]["alpha"]["ordinal"])
    assert (m["n_items"], m["n_judgments"], m["n_unscored"]) == (0, 60, 60)
    assert m["verdict"]["outcome"] == "not_estimable"
    assert "no scored judgments" in m["verdict"]["text"]
    r, j = tmp_path / "r.csv", tmp_path / "j.csv"
    df.to_csv(r, index=False)
    judges.to_csv(j, index=False)
    proc = h2h("analyze", "--ratings", str(r), "--judges", str(j), "--scale", "empathy=1..5",
               "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    assert "no scored judgments (0 of 60)" in proc.stdout and "no verdict" in proc.stdout


def test_every_judge_row_shows_its_n_and_the_brackets_are_explained(tmp_path):
    df, latent = _study()
    judges = pd.DataFrame({"item_id": [f"i{i}" for i in range(60)], "judge": "close",
                           "dimension": "empathy",
                           "score": np.clip(np.rint(latent), 1, 5)})
    judges.loc[:4, "score"] = np.nan
    r, j = tmp_path / "r.csv", tmp_path / "j.csv"
    df.to_csv(r, index=False)
    judges.to_csv(j, index=False)
    proc = h2h("analyze", "--ratings", str(r), "--judges", str(j), "--scale", "empathy=1..5",
               "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "55 (165)" in out  # 55 scored items, 3 pairs each
    assert "5 of 60" in out  # unscored
    assert "values in square brackets are 95% CIs from one paired item bootstrap" in out
    assert "values in parentheses are the humans' own" in out


def test_undefined_kappa_pairs_are_counted_not_averaged_over_zero():
    # r0 and r2 both give 3 on every item: their kappa is 0/0 (both marginals on one value);
    # r1 varies, so its pairs with them are defined (kappa 0).
    rows = []
    for i in range(12):
        rows += [(f"i{i}", "r0", 3), (f"i{i}", "r1", 1 + i % 5), (f"i{i}", "r2", 3)]
    res = analyze(_long(rows), {"empathy": S5}, options=AnalysisOptions(B=0)).to_dict()
    d = res["dimensions"]["empathy"]
    assert d["cohen_pairs"]["used"] == 2 and d["cohen_pairs"]["undefined"]["quadratic"] == 1
    assert d["cohen_kappa"]["quadratic"] == pytest.approx(0.0, abs=1e-12)
    note = next(n for n in d["notes"] if n.startswith("cohen_kappa"))
    assert "kappa undefined (no variance on the shared items) for 1 pairs (unweighted), " \
           "1 pairs (linear), 1 pairs (quadratic)" in note
    # every pair undefined: two groups, each constant on its own items; not estimable, and
    # said so instead of "mean over 0 rater pairs"
    rows = [(f"i{i}", r, 3) for i in range(12) for r in ("r0", "r1")] + \
           [(f"j{i}", r, 4) for i in range(12) for r in ("r2", "r3")]
    d = analyze(_long(rows), {"empathy": S5}, options=AnalysisOptions(B=0)).to_dict()["dimensions"][
        "empathy"]
    assert d["cohen_kappa"]["quadratic"] is None and d["cohen_pairs"]["used"] == 0
    note = next(n for n in d["notes"] if n.startswith("cohen_kappa"))
    assert note.startswith("cohen_kappa: not estimable, no rater pair has a defined kappa")
    assert "for 2 pairs (unweighted)" in note
    assert "over 0 rater pairs" not in note


def test_pairs_sharing_too_few_items_are_dropped_and_counted():
    rows = [(f"i{i}", r, 1 + (i + j) % 5) for i in range(30) for j, r in enumerate(("a", "b"))]
    rows += [(f"i{i}", "c", 1 + i % 5) for i in range(3)]  # shares 3 items with a and b
    d = analyze(_long(rows), {"empathy": S5}, options=AnalysisOptions(B=0)).to_dict()["dimensions"][
        "empathy"]
    assert d["cohen_pairs"]["used"] == 1 and d["cohen_pairs"]["too_few_items"] == 2
    assert any("2 pairs sharing fewer than 10 items left out" in n for n in d["notes"])


def test_bootstrap_zero_gives_point_estimates_only(tmp_path):
    df, latent = _study()
    judges = pd.DataFrame({"item_id": [f"i{i}" for i in range(60)], "judge": "close",
                           "dimension": "empathy", "score": np.clip(np.rint(latent), 1, 5)})
    res = analyze(df, {"empathy": S5}, judges=judges, options=AnalysisOptions(B=0)).to_dict()
    d, m = res["dimensions"]["empathy"], res["judges"]["close"]["empathy"]
    assert d["alpha"]["ordinal"] is not None and d["alpha_ci"]["low"] is None
    assert d["alpha_ci"]["B"] == 0
    assert m["qwk"] is not None and m["vs_ceiling"]["difference"]["low"] is None
    assert m["verdict"]["outcome"] == "not_estimable"
    assert "bootstrap skipped" in m["verdict"]["text"]
    assert res["human_ceiling"]["empathy"]["qwk_ci"] == {"low": None, "high": None}
    r, j = tmp_path / "r.csv", tmp_path / "j.csv"
    df.to_csv(r, index=False)
    judges.to_csv(j, index=False)
    proc = h2h("analyze", "--ratings", str(r), "--judges", str(j), "--bootstrap", "0")
    assert proc.returncode == 0, proc.stderr
    assert "Bootstrap skipped (--bootstrap 0)" in proc.stdout
    bad = h2h("analyze", "--ratings", str(r), "--bootstrap", "-1")
    assert bad.returncode == 1 and "--bootstrap must be 0" in bad.stderr


def test_a_block_without_ratings_has_every_key_of_a_block_with_them():
    """Readers of `h2h analyze --json` index the same keys whether or not a dimension could be
    estimated: a block with no ratings has the same keys (each empty) as one with data."""
    from analysis.agreement import human_block
    from analysis.analyze import AnalysisOptions
    from analysis.scales import Scale

    sc = Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))
    opt = AnalysisOptions(B=0)
    rng = np.random.default_rng(0)
    full = pd.DataFrame({"item": np.repeat(np.arange(12), 3), "rater": list("abc") * 12,
                         "score": rng.integers(1, 6, 36).astype(float)})
    empty = full.assign(score=np.nan)
    with_data, without = human_block(full, sc, opt).to_dict(), human_block(empty, sc, opt).to_dict()
    assert set(without) == set(with_data)
    assert without["percent_exact"] is None and without["percent_within1"] is None
    assert without["raters"] == {}

"""Labels and scales as users have them (issue 9 §4): category labels as text, judge labels
off the scale, non-integer scales measured in their own units."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.analyze import AnalysisOptions, analyze
from analysis.ceiling import value_qwk
from analysis.scales import Scale
from tests.helpers import H2HResult, run_h2h

pytestmark = pytest.mark.integration  # left out of `make test-fast`

LABELS = ("unsafe", "borderline", "safe")


def h2h(*args: str) -> H2HResult:
    return run_h2h(*args, check=False)


def _labelled_study(tmp_path, n=40, seed=4):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)
    rows, jrows = [], []
    for i in range(n):
        for r in ("ann", "bob", "cy"):
            code = int(np.clip(truth[i] + rng.choice([-1, 0, 0, 0, 1]), 0, 2))
            rows.append((f"it{i}", r, "safety", code))
        jrows.append((f"it{i}", "judge-a", "safety", int(truth[i])))
    num = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    jnum = pd.DataFrame(jrows, columns=["item_id", "judge", "dimension", "score"])
    paths = {}
    for kind, df, jdf in (("codes", num.assign(score=num["score"] + 1),
                           jnum.assign(score=jnum["score"] + 1)),
                          ("labels", num.assign(score=[LABELS[c] for c in num["score"]]),
                           jnum.assign(score=[LABELS[c] for c in jnum["score"]]))):
        paths[kind] = (tmp_path / f"r_{kind}.csv", tmp_path / f"j_{kind}.csv")
        df.to_csv(paths[kind][0], index=False)
        jdf.to_csv(paths[kind][1], index=False)
    return paths


def _run(paths, scale, *extra):
    r, j = paths
    proc = h2h("analyze", "--ratings", str(r), "--judges", str(j), "--scale", scale,
               "--bootstrap", "200", "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_text_labels_round_trip(tmp_path):
    paths = _labelled_study(tmp_path)
    coded = _run(paths["codes"], "safety=1..3")
    named = _run(paths["labels"], "safety=unsafe,borderline,safe")
    dc, dn = coded["dimensions"]["safety"], named["dimensions"]["safety"]
    assert dn["labels"] == list(LABELS) and dn["scale"] == [1.0, 2.0, 3.0]
    # the labels are coded 1..3 in the order given: every number is the coded run's
    for key in ("alpha", "alpha_ci", "fleiss_kappa", "cohen_kappa", "icc", "gwet",
                "percent_exact", "percent_within1"):
        assert dn[key] == dc[key], key
    jc, jn = coded["judges"]["judge-a"]["safety"], named["judges"]["judge-a"]["safety"]
    assert jn["qwk"] == jc["qwk"] and jn["verdict"] == jc["verdict"]
    assert jn["confusion"]["labels"] == list(LABELS)
    assert jn["confusion"]["matrix"] == jc["confusion"]["matrix"]
    # and the readable output names the scale by its labels
    r, j = paths["labels"]
    proc = h2h("analyze", "--ratings", str(r), "--scale", "safety=unsafe,borderline,safe",
               "--bootstrap", "50")
    assert "scale unsafe, borderline, safe" in proc.stdout


def test_labels_without_a_declared_order_are_nominal(tmp_path):
    """Only when the user says so (issue 34): text scores without --scale or --level are
    refused, naming the line; --level nominal takes them as unordered categories."""
    paths = _labelled_study(tmp_path)
    r, _ = paths["labels"]
    refused = h2h("analyze", "--ratings", str(r), "--bootstrap", "50", "--json")
    assert refused.returncode == 1 and "has no declared scale" in refused.stderr
    assert "--level nominal" in refused.stderr and refused.stdout == ""
    proc = h2h("analyze", "--ratings", str(r), "--bootstrap", "50", "--json", "--level",
               "nominal")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    d = res["dimensions"]["safety"]
    assert d["level"] == "nominal" and d["labels"] == ["borderline", "safe", "unsafe"]
    assert d["alpha"]["ordinal"] is None and d["alpha"]["nominal"] is not None
    assert any("treated as nominal" in n and "--scale safety=borderline,safe,unsafe" in n
               for n in res["meta"]["scale_notes"])
    # a level prefix makes a declared label scale nominal too
    proc = h2h("analyze", "--ratings", str(r), "--scale", "safety=nominal:unsafe,borderline,"
               "safe", "--bootstrap", "50", "--json")
    assert json.loads(proc.stdout)["dimensions"]["safety"]["level"] == "nominal"


def test_a_rating_off_the_label_scale_rejects_the_file_with_its_line(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("item_id,rater,dimension,score\na,x,safety,safe\na,y,safety,maybe\n"
                 "b,x,safety,unsafe\n", encoding="utf-8")
    proc = h2h("analyze", "--ratings", str(f), "--scale", "safety=unsafe,borderline,safe")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "r.csv:3: field 'score': 'maybe' is not one of unsafe, borderline, safe for " \
           "safety" in proc.stderr


def test_a_judge_label_off_the_scale_is_named_and_left_out(tmp_path):
    paths = _labelled_study(tmp_path)
    r, j = paths["labels"]
    jdf = pd.read_csv(j)
    jdf.loc[3, "score"] = "dangerous"
    jdf.to_csv(j, index=False)
    res = _run((r, j), "safety=unsafe,borderline,safe")
    m = res["judges"]["judge-a"]["safety"]
    assert "judge judge-a, item it3: score 'dangerous' is not one of unsafe, borderline, " \
           "safe; left out as unscored" in m["notes"]
    assert m["n_unscored"] == 1 and m["n_scored_items"] == 39


def test_a_numeric_judge_score_outside_the_human_range(tmp_path):
    rows = [(f"i{i}", r, "empathy", 1 + (i + k) % 5) for i in range(30)
            for k, r in enumerate("abc")]
    r = tmp_path / "r.csv"
    pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"]).to_csv(r,
                                                                                index=False)
    j = tmp_path / "j.csv"
    pd.DataFrame({"item_id": [f"i{i}" for i in range(30)], "judge": "big",
                  "dimension": "empathy", "score": [6] + [1 + i % 5 for i in range(1, 30)]}
                 ).to_csv(j, index=False)
    # today: the whole run aborts with "a score is not on the scale"
    proc = h2h("analyze", "--ratings", str(r), "--judges", str(j), "--bootstrap", "50",
               "--json")
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)["judges"]["big"]["empathy"]
    assert "judge big, item i0: score 6 is not on the scale 1..5; left out as unscored" in \
        m["notes"]
    # declared on the scale, it is placed there
    proc = h2h("analyze", "--ratings", str(r), "--judges", str(j), "--scale", "empathy=1..6",
               "--bootstrap", "50", "--json")
    m = json.loads(proc.stdout)["judges"]["big"]["empathy"]
    assert m["n_unscored"] == 0 and not any("not on the scale" in n for n in m["notes"])


def test_non_integer_scales_use_value_distances(tmp_path):
    # Two raters on a scale seen as 1, 1.5, 2.5, 4 (no rubric). Pairs:
    #   (1, 1.5) (2.5, 4) (1, 4) (1.5, 1.5) (4, 4) (2.5, 2.5)
    # within one scale unit: |d| = .5, 1.5, 3, 0, 0, 0 → 4 of 6 (positions would count
    # 2.5-4 as neighbours: 5 of 6); exact 3 of 6.
    pairs = [(1, 1.5), (2.5, 4), (1, 4), (1.5, 1.5), (4, 4), (2.5, 2.5)]
    rows = [(f"i{i}", r, "x", v) for i, p in enumerate(pairs) for r, v in zip("ab", p,
                                                                            strict=True)]
    f = tmp_path / "r.csv"
    pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"]).to_csv(f,
                                                                                index=False)
    proc = h2h("analyze", "--ratings", str(f), "--bootstrap", "0", "--min-items", "2",
               "--min-shared-items", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    d = res["dimensions"]["x"]
    assert d["scale"] == [1.0, 1.5, 2.5, 4.0]
    assert any("non-integer scores; scale taken from the observed values (1, 1.5, 2.5, 4)" in n
               for n in res["meta"]["scale_notes"])
    assert d["percent_exact"] == pytest.approx(3 / 6)
    assert d["percent_within1"] == pytest.approx(4 / 6)
    a = np.array([p[0] for p in pairs], float)
    b = np.array([p[1] for p in pairs], float)
    # Cohen's quadratic kappa with weights on the values is value_qwk (an identity shown in
    # test_ceiling.py); by positions it would be another number
    assert d["cohen_kappa"]["quadratic"] == pytest.approx(value_qwk(a, b), abs=1e-12)
    pos = {1.0: 0, 1.5: 1, 2.5: 2, 4.0: 3}
    assert abs(value_qwk(np.vectorize(pos.get)(a), np.vectorize(pos.get)(b))
               - d["cohen_kappa"]["quadratic"]) > 0.01


def test_scale_parsing_errors_are_clear(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("item_id,rater,dimension,score\na,x,s,1\n", encoding="utf-8")
    for spec, msg in (("s=a,a", "names a value twice"), ("s=a,,b", "none empty"),
                      ("s=", "should look like"), ("s=5..1", "from low to high")):
        proc = h2h("analyze", "--ratings", str(f), "--scale", spec)
        assert proc.returncode == 1 and msg in proc.stderr, (spec, proc.stderr)


def test_scale_of_labels_codes_in_order():
    sc = Scale.of_labels("ordinal", LABELS)
    assert sc.values == (1.0, 2.0, 3.0) and sc.labels == LABELS
    df = pd.DataFrame({"item_id": ["a", "a", "b", "b"], "rater": ["x", "y", "x", "y"],
                       "dimension": "safety", "score": ["safe", "borderline", "unsafe",
                                                        "unsafe"]})
    res = analyze(df, {"safety": sc}, options=AnalysisOptions(B=0, min_units=2,
                                                              min_shared_items=2)).to_dict()
    r = res["dimensions"]["safety"]["raters"]
    assert r["x"]["mean"] == 2.0 and r["y"]["mean"] == 1.5

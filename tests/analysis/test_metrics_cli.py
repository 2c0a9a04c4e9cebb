"""`h2h metrics run` as a user runs it, then `h2h analyze`, `h2h calibrate` and `h2h report`
on the demo study: the metrics beside the judges and the human ceiling, and the report's
section "Do the benchmark's metrics agree with psychologists?"."""

from __future__ import annotations

import csv
import json
import subprocess

import pytest

from tests.helpers import H2HResult, item, jsonl, run_h2h

pytestmark = pytest.mark.integration  # left out of `make test-fast`

SECTION = "Do the benchmark's metrics agree with psychologists?"


def h2h(*args: str, check: bool = True, env: dict | None = None) -> H2HResult:
    return run_h2h(*args, check=check, env=env)


def _user_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    for n in needles:
        assert n in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def demo(tmp_path_factory, tiny_model, demo_template):
    tmp = tmp_path_factory.mktemp("metrics")
    db = str(demo_template.copy_to(tmp))
    run = h2h("metrics", "run", "--db", db, "--embedding-model", str(tiny_model / "st"))
    out = tmp / "report"
    report = h2h("report", "--db", db, "--out", str(out), "--bootstrap", "200", "--seed", "3")
    analysis = json.loads(h2h("analyze", "--db", db, "--bootstrap", "200", "--seed", "3",
                              "--json").stdout)
    return {"db": db, "run": run.stdout, "run_err": run.stderr, "out": out, "report": report.stdout,
            "analysis": analysis, "tmp": tmp}


def test_metrics_run_scores_every_demo_item_and_says_how(demo):
    out = demo["run"]
    assert "147 of 147 items have a reference reply (114 English, 33 Chinese)" in out
    assert "9 attention-check items left out" in out  # 6 for single items, 3 for pairs
    for name in ("bleu", "chrf", "rougeL", "embedding"):
        assert f"│ {name} " in out
    assert "bleu: sacrebleu " in out and "smooth exp" in out
    assert "English: 13a; Chinese: zh (one token per Chinese character)" in out
    assert "rougeL: rouge-score " in out  # ROUGE-L's Chinese segmentation, stated
    assert "Chinese: one token per Chinese character; Latin words and numbers kept" in out
    assert "Loading weights" not in demo["run_err"]  # no progress bar of the model's loading
    again = h2h("metrics", "run", "--db", demo["db"], "--metrics", "bleu,chrf").stdout
    assert "│ bleu          │ 0-100 │ 0          │ 147" in again  # nothing recomputed
    listed = h2h("metrics", "list", "--db", demo["db"]).stdout
    assert "sacrebleu" in listed and "rouge-score" in listed and "fingerprint=" in listed


def test_analyze_places_each_metric_beside_the_judges_and_the_ceiling(demo):
    m = demo["analysis"]["metrics"]
    assert [c["name"] for c in m["configurations"]] == ["bleu", "chrf", "rougeL",
                                                        "embedding"]
    bleu = m["configurations"][0]
    assert bleu["languages"] == {"en": 114, "zh": 33} and bleu["library"] == "sacrebleu"
    assert set(m["dimensions"]) == {"empathy", "safety", "fluency", "memory_fidelity",
                                    "plan_quality"}
    emp = m["dimensions"]["empathy"]
    names = [(r["name"], r["kind"]) for r in emp["rows"]]
    assert names[0] == ("human ceiling", "ceiling")
    assert {("sim-judge-plain", "judge"), ("bleu", "metric"), ("embedding", "metric")} <= \
        set(names)
    for r in emp["rows"]:
        s = r["spearman"]
        assert s["low"] <= s["value"] <= s["high"], r["name"]
    assert emp["B"] == 200 and emp["seed"] == 3 and "not computed" in m["kappa"]
    sysm = emp["system"]
    assert sysm["n_models"] == 3 and sysm["resampled"] == "scenarios"
    assert set(sysm["rows"]) == {n for n, k in names if k != "ceiling"}
    text = h2h("analyze", "--db", demo["db"], "--bootstrap", "50").stdout
    assert "Do the benchmark's metrics agree with the psychologists? empathy" in text
    assert "bleu (metric)" in text and "sim-judge-anchored (judge)" in text


def test_the_report_shows_the_section_with_the_analysis_numbers(demo):
    from html import escape

    out = demo["out"]
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"## {SECTION}" in md and "`tables/metrics_system.csv`" in md
    # the summary states the best metric per dimension before any detail
    assert "The best reference-based metric, " in md.split(f"## {SECTION}")[0]
    assert escape(SECTION) in html and "fig-metrics_vs_psychologists" in html
    assert "The best reference-based metric, " in html.split("<details")[0]
    assert (out / "figures" / "metrics_vs_psychologists.png").stat().st_size > 10_000
    assert (out / "figures" / "metrics_vs_psychologists.svg").exists()
    mine = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    assert mine["metrics"] == demo["analysis"]["metrics"]
    with open(out / "tables" / "metrics_vs_humans.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    ref = {(d, r["name"]): r for d, b in mine["metrics"]["dimensions"].items()
           for r in b["rows"]}
    assert len(rows) == len(ref)
    for row in rows:
        r = ref[(row["dimension"], row["row"])]
        assert float(row["spearman"]) == r["spearman"]["value"]
        assert float(row["spearman_low"]) == r["spearman"]["low"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in manifest["metric_configurations"]] == ["bleu", "chrf",
                                                                      "rougeL", "embedding"]
    assert manifest["packages"]["sacrebleu"] != "not installed"
    assert "metrics" in manifest["bootstrap"]
    assert "\\input{tables/metrics_vs_humans.tex}" in (out / "tables.tex").read_text(
        encoding="utf-8")
    tex = (out / "tables" / "metrics_vs_humans.tex").read_text(encoding="utf-8")
    assert SECTION in tex and "\\label{tab:metrics_vs_humans}" in tex


def test_the_sections_latex_compiles(demo, tmp_path):
    """The metrics section's table and figure of the report on the demo with metric scores,
    in an ACL-like two-column page and in article: no overfull box over 1 pt, no "Float too
    large". (The rest of the same demo report is compiled by test_report_latex.py.)"""
    import shutil

    from tests.analysis.test_report_latex import _check_report

    shutil.copytree(demo["out"], tmp_path / "report")
    body = _check_report(tmp_path / "report", "metrics-demo", only="metrics_vs")
    assert "\\input{tables/metrics_vs_humans.tex}" in body
    assert "figures/metrics_vs_psychologists.pdf}" in body


def test_calibrate_takes_metrics_beside_judge_configurations(demo):
    proc = h2h("calibrate", "--db", demo["db"], "--configs", "sim-judge-anchored,bleu",
               "--bootstrap", "50", "--json")
    doc = json.loads(proc.stdout)
    assert set(doc) == {"judges", "metrics"}
    assert "sim-judge-anchored" in doc["judges"]["empathy"]["configs"]
    rows = [r["name"] for r in doc["metrics"]["dimensions"]["empathy"]["rows"]]
    assert rows == ["human ceiling", "sim-judge-anchored", "bleu"]
    text = h2h("calibrate", "--db", demo["db"], "--configs", "bleu", "--bootstrap",
               "50").stdout
    assert "bleu (metric)" in text and "QWK" in text  # says why QWK is not computed
    _user_error(h2h("calibrate", "--db", demo["db"], "--configs", "bleu,nope", check=False),
                "no judge or metric configuration 'nope'")


def test_analyze_takes_a_metrics_csv(tmp_path):
    ratings = tmp_path / "r.csv"
    metrics = tmp_path / "m.csv"
    rows = ["item_id,rater,dimension,score"]
    mrows = ["item_id,metric,score,model"]
    for i in range(30):
        q = i % 5 + 1
        rows += [f"i{i},a,empathy,{q}", f"i{i},b,empathy,{min(5, q + i % 2)}"]
        mrows.append(f"i{i},bleu,{q * 10 + i % 3},{'xyz'[i % 3]}")
    ratings.write_text("\n".join(rows) + "\n", encoding="utf-8")
    metrics.write_text("\n".join(mrows) + "\n", encoding="utf-8")
    doc = json.loads(h2h("analyze", "--ratings", str(ratings), "--metrics", str(metrics),
                         "--bootstrap", "50", "--min-shared-items", "5", "--json").stdout)
    emp = doc["metrics"]["dimensions"]["empathy"]
    assert [r["name"] for r in emp["rows"]] == ["human ceiling", "bleu"]
    assert emp["rows"][1]["spearman"]["value"] > 0.8
    assert emp["system"]["n_models"] == 3 and emp["system"]["n_scenarios"] == 30
    metrics.write_text("item_id,metric,score\ni1,bleu,high\n", encoding="utf-8")
    _user_error(h2h("analyze", "--ratings", str(ratings), "--metrics", str(metrics),
                    check=False), "m.csv:2: field 'score': 'high' is not a number")
    # a short row hides no score problem (issue 34: every problem of a file at once)
    metrics.write_text("item_id,metric,score\ni1,bleu\ni2,bleu,high\n", encoding="utf-8")
    _user_error(h2h("analyze", "--ratings", str(ratings), "--metrics", str(metrics),
                    check=False), "m.csv:2: 2 cells, fewer than the header's 3 columns",
                "m.csv:3: field 'score': 'high' is not a number")
    # an infinite score would leave Pearson's r silently empty
    metrics.write_text("item_id,metric,score\ni1,bleu,12\ni2,bleu,-inf\n", encoding="utf-8")
    _user_error(h2h("analyze", "--ratings", str(ratings), "--metrics", str(metrics),
                    check=False), "m.csv:3: field 'score': '-inf' is not a finite number")


def test_clear_messages_for_what_cannot_be_done(tmp_path, monkeypatch):
    monkeypatch.delenv("H2H_EMBEDDING_MODEL", raising=False)
    db = str(tmp_path / "s.db")
    h2h("init", "--db", db)
    f = tmp_path / "items.jsonl"
    f.write_text(jsonl(item("a"), item("b")), encoding="utf-8")
    h2h("import", "items", str(f), "--db", db)
    _user_error(h2h("metrics", "run", "--db", db, check=False),
                "none of the study's 2 items has a reference reply")
    _user_error(h2h("metrics", "run", "--db", db, "--metrics", "bleu,meteor", check=False),
                "'meteor' is not one of bleu, chrf, rougeL, embedding")
    _user_error(h2h("metrics", "run", "--db", db, "--metrics", "embedding", check=False),
                "no embedding model configured")
    _user_error(h2h("metrics", "run", "--db", db, "--embedding-model", str(tmp_path / "no"),
                    check=False), "no such file or folder", "never downloaded")
    _user_error(h2h("metrics", "run", "--db", db, "--zh-segmenter", "words", check=False),
                "--zh-segmenter")
    f.write_text(jsonl(item("a", reference="(nods) hello from a"), item("b")),
                 encoding="utf-8")
    h2h("import", "items", str(f), "--db", db, "--update")
    out = h2h("metrics", "run", "--db", db).stdout
    assert "1 of 2 items have a reference reply (1 English, 0 Chinese); 1 without a " \
           "reference are skipped" in out
    assert "embedding: skipped — no embedding model configured" in out
    listed = h2h("metrics", "list", "--db", db).stdout
    assert "bleu" in listed and "embedding" not in listed
    # a name prefix names new settings; the same settings keep their first name
    named = h2h("metrics", "run", "--db", db, "--name", "v2", "--metrics", "rougeL",
                "--zh-segmenter", "jieba").stdout
    assert "v2-rougeL: rouge-score" in named and "zh_segmenter jieba" in named
    _user_error(h2h("metrics", "run", "--db", db, "--name", "v2", "--metrics", "bleu",
                    check=False), "already stored as metric configuration 'bleu'")


def test_exported_scores_go_to_r_pandas_and_back_into_analyze(demo):
    """`h2h metrics export` is a long CSV; with the exported ratings it is a study-free input
    of `h2h analyze --metrics` (model and scenario columns give the system level)."""
    tmp = demo["tmp"]
    m, r = tmp / "metric_scores.csv", tmp / "ratings.csv"
    h2h("metrics", "export", "--db", demo["db"], "--out", str(m))
    h2h("export", "ratings", "--db", demo["db"], "--out", str(r))
    with open(m, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 147 * 4 and {r_["metric"] for r_ in rows} == {
        "bleu", "chrf", "rougeL", "embedding"}
    zh = next(r_ for r_ in rows if r_["item_id"].startswith("dlg-009"))
    assert zh["lang"] == "zh" and float(zh["cjk_share"]) >= 0.5 and zh["model"]
    doc = json.loads(h2h("analyze", "--ratings", str(r), "--metrics", str(m), "--scale",
                         "empathy=1..5", "--bootstrap", "50", "--json").stdout)
    emp = doc["metrics"]["dimensions"]["empathy"]
    assert [x["name"] for x in emp["rows"]] == ["human ceiling", "bleu", "chrf", "embedding",
                                                "rougeL"]
    assert emp["system"]["n_models"] == 3 and emp["system"]["n_scenarios"] == 43

"""`h2h report` on the demo study: same numbers as `h2h analyze --json`, LaTeX that compiles,
an HTML file that renders every figure offline, a manifest that matches the study."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys

import pytest

from tests.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS


def h2h(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "annotate.cli", *args], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    db = tmp / "demo.db"
    h2h("demo", "--db", str(db))
    out = tmp / "report"
    proc = h2h("report", "--db", str(db), "--out", str(out), "--bootstrap", "300",
               "--seed", "9", "--severity-adjusted")
    analysis = json.loads(h2h("analyze", "--db", str(db), "--bootstrap", "300", "--seed", "9",
                              "--json").stdout)
    return {"db": db, "out": out, "stdout": proc.stdout, "analysis": analysis}


def test_every_output_is_written(report):
    out = report["out"]
    for name in ("report.html", "report.md", "tables.tex", "manifest.json", "analysis.json"):
        assert (out / name).stat().st_size > 0, name
    pngs = sorted(p.stem for p in (out / "figures").glob("*.png"))
    svgs = sorted(p.stem for p in (out / "figures").glob("*.svg"))
    assert pngs == svgs and "agreement" in pngs and "leaderboard_humans" in pngs
    assert {"calibration", "judges_vs_ceiling", "leaderboard_judge",
            "confusion_sim-judge-anchored", "bland_altman_sim-judge-plain"} <= set(pngs)
    assert (out / "tables" / "human_agreement.csv").exists()
    assert "Report written to" in report["stdout"]


def test_numbers_equal_the_analysis_json(report):
    out, ref = report["out"], report["analysis"]
    mine = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    assert mine["dimensions"] == ref["dimensions"]
    assert mine["judges"] == ref["judges"] and mine["human_ceiling"] == ref["human_ceiling"]
    with open(out / "tables" / "human_agreement.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(ref["dimensions"])
    for row in rows:
        d = ref["dimensions"][row["dimension"]]
        assert float(row["alpha"]) == d["alpha"][d["level"]]
        assert float(row["alpha_low"]) == d["alpha_ci"]["low"]
        assert float(row["cohen_qwk"]) == d["cohen_kappa"]["quadratic"]
    md = (out / "report.md").read_text(encoding="utf-8")
    emp = ref["dimensions"]["empathy"]
    assert f"{emp['alpha']['ordinal']:.3f} [{emp['alpha_ci']['low']:.3f}, " \
           f"{emp['alpha_ci']['high']:.3f}]" in md


def test_tables_tex_compiles_with_pdflatex(report, tmp_path):
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex missing: `make test` installs Debian's texlive packages"
    shutil.copy(report["out"] / "tables.tex", tmp_path / "tables.tex")
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
        "\\begin{document}\n\\input{tables.tex}\n\\end{document}\n", encoding="utf-8")
    proc = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 1000
    tex = (tmp_path / "tables.tex").read_text(encoding="utf-8")
    assert "\\toprule" in tex and "B = 300, seed = 9" in tex


def test_manifest_describes_the_study(report):
    m = json.loads((report["out"] / "manifest.json").read_text(encoding="utf-8"))
    assert m["study"] == "H2HTalk demo study"
    assert m["rubric"]["version"] == report["analysis"]["meta"]["rubric"]["version"]
    assert m["bootstrap"]["B"] == 300 and m["bootstrap"]["seed"] == 9
    assert m["counts"]["items"] == 147 and len(m["counts"]["simulated_raters"]) == 6
    assert m["packages"]["numpy"] and m["generated_at"].endswith("+00:00")
    import sqlalchemy as sa

    from data.engine import get_engine
    with get_engine(report["db"]).connect() as c:
        stored = {r[0]: (r[1], r[2], r[3]) for r in c.execute(sa.text(
            "SELECT name, hash, template_hash, samples FROM judge_config")).all()}
    assert {j["name"]: (j["hash"], j["template_hash"], j["samples"])
            for j in m["judge_configurations"]} == stored
    assert len(stored) == 2 and m["counts"]["judgments"] == 2160
    assert m["best_judge"] == "sim-judge-anchored"


@pytest.mark.browser
def test_html_renders_every_figure_offline(report):
    from playwright.sync_api import sync_playwright

    html_file = report["out"] / "report.html"
    n_figs = len(list((report["out"] / "figures").glob("*.png")))
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("request", lambda r: outside.append(r.url)
                if not r.url.startswith(("file:", "data:", "blob:")) else None)
        page.goto(html_file.as_uri())
        page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg')"
                               f".length >= {n_figs}", timeout=60_000)
        assert page.locator(".fig .js-plotly-plot").count() == n_figs
        assert page.get_by_text("Human agreement per dimension").count() >= 1
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        browser.close()
    assert outside == [], f"the report fetched {outside[:3]}"


def test_leaderboard_has_the_severity_adjusted_column(report):
    with open(report["out"] / "tables" / "leaderboard_humans.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert {"fair_mean", "fair_low", "fair_high"} <= set(rows[0])
    assert all(r["fair_mean"] not in ("", None) for r in rows if r["task"] == "all")
    md = (report["out"] / "report.md").read_text(encoding="utf-8")
    assert "Adjusted for rater severity (fair_mean)" in md
    # the judge leaderboard is not adjusted (a judge has no severity in this model)
    with open(report["out"] / "tables" / "leaderboard_judge.csv", encoding="utf-8") as fh:
        assert "fair_mean" not in next(csv.reader(fh))


def test_judge_table_shows_the_ceiling_with_cis_and_the_verdict(report):
    ref = report["analysis"]
    with open(report["out"] / "tables" / "judge_vs_ceiling.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 10
    outcomes = set()
    for row in rows:
        m = ref["judges"][row["judge"]][row["dimension"]]
        vc = m["vs_ceiling"]
        assert float(row["ceiling_qwk"]) == vc["ceiling_qwk"]["value"]
        assert float(row["ceiling_low"]) == vc["ceiling_qwk"]["low"]
        assert float(row["ceiling_high"]) == vc["ceiling_qwk"]["high"]
        assert float(row["judge_minus_ceiling"]) == vc["difference"]["value"]
        assert float(row["diff_low"]) < float(row["judge_minus_ceiling"]) < \
            float(row["diff_high"])
        assert row["verdict"] == m["verdict"]["phrase"]
        outcomes.add(m["verdict"]["outcome"])
    assert {"can_replace", "not_enough_evidence"} <= outcomes
    md = (report["out"] / "report.md").read_text(encoding="utf-8")
    assert "## Verdicts" in md and "can replace a human rater — QWK" in md
    assert "not enough evidence yet (about" in md
    e = ref["judges"]["sim-judge-anchored"]["empathy"]["vs_ceiling"]["ceiling_qwk"]
    assert f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]" in md
    assert "against the margin −0.05" in report["stdout"]


def test_bootstrap_zero_writes_a_report_of_point_estimates(report, tmp_path):
    proc = h2h("report", "--db", str(report["db"]), "--out", str(tmp_path / "r0"),
               "--bootstrap", "0", "--no-figures")
    assert "no verdict — QWK" in proc.stdout and "no confidence interval" in proc.stdout
    m = json.loads((tmp_path / "r0" / "manifest.json").read_text(encoding="utf-8"))
    assert m["bootstrap"]["B"] == 0
    with open(tmp_path / "r0" / "tables" / "leaderboard_humans.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["mean"] and not r["low"] for r in rows)

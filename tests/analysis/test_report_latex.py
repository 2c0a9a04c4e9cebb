"""The report's LaTeX on a real page: every table compiled with pdflatex in plain ``article``
and in an ACL/ARR-like two-column document (A4, two 7.7 cm columns 0.6 cm apart, 11 pt
Times), with no overfull box over 1 pt and no "Float too large"; the pages are rendered to
PNG under test-artifacts/report-latex/ for a reviewer to look at.

Two studies: the demo, and a stress study built to break tables that are not designed for
the page (eight dimensions with long labels and TeX specials, twelve models with long,
underscored and accented names)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from analysis.report.latex import tex
from tests.browser import ARTIFACTS
from tests.helpers import H2HResult, run_h2h

pytestmark = pytest.mark.integration  # left out of `make test-fast`

ACL = r"""\documentclass[11pt,a4paper,twocolumn]{article}
% the page of an ACL/ARR paper (acl.sty): A4, 16 cm text in two 7.7 cm columns 0.6 cm apart
\setlength{\paperwidth}{21cm}\setlength{\paperheight}{29.7cm}
\setlength{\textwidth}{16cm}\setlength{\columnsep}{0.6cm}\setlength{\textheight}{24.7cm}
\setlength{\oddsidemargin}{-0.04cm}\setlength{\evensidemargin}{-0.04cm}
\setlength{\topmargin}{-1.04cm}\setlength{\headheight}{0pt}\setlength{\headsep}{0pt}
\usepackage[T1]{fontenc}
\usepackage{%TIMES%}
\input{preamble}
\begin{document}
\section{Results}
Body text at the size of the paper, to compare with the tables.
%BODY%
\end{document}
"""
ARTICLE = r"""\documentclass{article}
\input{preamble}
\begin{document}
%BODY%
\end{document}
"""


def h2h(*args: str) -> H2HResult:
    return run_h2h(*args)


def _times() -> str:
    kpse = shutil.which("kpsewhich")
    found = kpse and subprocess.run([kpse, "newtxtext.sty"], capture_output=True,
                                    text=True).stdout.strip()
    return "newtxtext,newtxmath" if found else "mathptmx"


def compile_problems(folder, name: str, template: str, body: str, shots: str) -> list[str]:
    """Compile ``body`` in ``template`` inside ``folder``; the problems a reader would see."""
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex missing: `make test` installs Debian's texlive packages"
    (folder / f"{name}.tex").write_text(template.replace("%TIMES%", _times())
                                        .replace("%BODY%", body), encoding="utf-8")
    proc = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error",
                           f"{name}.tex"], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    log = (folder / f"{name}.log").read_text(encoding="latin-1")
    problems = []
    if proc.returncode != 0:
        problems.append("pdflatex failed: " + proc.stdout[-2000:])
    for m in re.finditer(r"Overfull \\hbox \((\d+\.\d+)pt too wide\)[^\n]*\n([^\n]*)", log):
        if float(m.group(1)) > 1.0:
            problems.append(f"overfull by {m.group(1)} pt: {m.group(2)[:80]}")
    problems += [ln for ln in log.splitlines() if "Float too large" in ln]
    problems += [ln for ln in log.splitlines() if ln.startswith("! ")]
    pdftoppm = shutil.which("pdftoppm")
    assert pdftoppm, "pdftoppm missing: `make test` installs Debian's poppler-utils"
    out = ARTIFACTS / "report-latex"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"{shots}-*.png"):
        old.unlink()
    if (folder / f"{name}.pdf").exists():
        subprocess.run([pdftoppm, "-r", "80", "-png", f"{name}.pdf", str(out / shots)],
                       cwd=folder, check=True, timeout=120)
    return problems


def _check_report(out, label: str, only: str | None = None) -> str:
    """Every table (and figure) of the report in ``out`` on both pages; with ``only``, the
    tables and figures whose name has ``only`` in it (one section's, when the rest of the
    same report is compiled by another test). Returns the LaTeX body compiled."""
    tables = sorted((out / "tables").glob("*.tex"))
    assert tables, "no LaTeX tables written"
    for t in tables:
        text = t.read_text(encoding="utf-8")
        assert "\\resizebox" not in text and "\\scalebox" not in text, t.name
        assert "\\toprule" in text and "\\bottomrule" in text, t.name
    body = "\\input{tables}\n" + ("\\input{figures}\n" if (out / "figures.tex").exists()
                                  else "")
    if only:
        figures = [b for b in (out / "figures.tex").read_text(encoding="utf-8").split("\n\n")
                   if f"figures/{only}" in b] if (out / "figures.tex").exists() else []
        picked = [t for t in tables if only in t.stem]
        assert picked, f"no table named *{only}*"
        body = "".join(f"\\input{{tables/{t.name}}}\n" for t in picked) + "\n\n".join(figures)
    for name, template in (("acl", ACL), ("article", ARTICLE)):
        problems = compile_problems(out, name, template, body, f"{label}-{name}")
        assert problems == [], f"{label} in {name}: {problems}"
    return body


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory, demo_report_template):
    """A copy of the demo study's report (the one test_report.py reads)."""
    return demo_report_template.copy_to(tmp_path_factory.mktemp("latex"))[1]


def test_demo_tables_and_figures_fit_an_acl_page_and_an_article(demo_report):
    _check_report(demo_report, "demo")
    agreement = (demo_report / "tables" / "agreement.tex").read_text(encoding="utf-8")
    # the table a paper puts in a column: \columnwidth, booktabs, siunitx, rubric labels
    assert "\\begin{table}[" in agreement and "{\\columnwidth}" in agreement
    assert "S[table-format" in agreement and "Memory fidelity" in agreement
    assert "memory\\_fidelity" not in agreement and "$\\geq$" in agreement
    fig = (demo_report / "figures.tex").read_text(encoding="utf-8")
    assert "\\includegraphics[width=\\columnwidth]{figures/judges_vs_ceiling.pdf}" in fig
    pre = (demo_report / "preamble.tex").read_text(encoding="utf-8")
    for pkg in ("booktabs", "siunitx", "tabularx", "graphicx"):
        assert f"\\usepackage{{{pkg}}}" in pre


RUBRIC = '''name = "Stress rubric"
tasks = ["dialogue", "recollection", "itinerary"]
guidelines = "Rate the reply."
'''
LABELS = ["Empathy & validation (EPITOME)", "Safety_critical crisis handling",
          "Fluency, coherence and register", "Memory fidelity over long horizons",
          "Plan quality: constraint satisfaction", "Persona consistency (100% in character)",
          "Boundary-maintaining behaviour", "Proactive care ~ follow-up"]
MODELS = ["companion-model-with-a-very-long-name-v2.5", "gpt_4o_mini_sap_variant",
          "Mistral-Large-Instruct-2411", "llama-3.1-8b", "qwen2.5:72b", "Claude_Sonnet",
          "CompanionModelWithoutAnyBreakOpportunity", "café-bot", "m9", "m10", "m11", "m12"]


def _stress_study(tmp) -> str:
    dims = []
    for k, label in enumerate(LABELS):
        anchors = "\n".join(f'{v} = "level {v}"' for v in range(1, 6))
        dims.append(f'[[dimensions]]\nkey = "d{k}"\nlabel = "{label}"\nscale = "1..5"\n'
                    f"[dimensions.anchors]\n{anchors}\n")
    (tmp / "rubric.toml").write_text(RUBRIC + "\n".join(dims), encoding="utf-8")
    db = str(tmp / "stress.db")
    h2h("init", "--db", db, "--rubric", str(tmp / "rubric.toml"), "--name", "Stress & test")
    rng = np.random.default_rng(3)
    items, rows = [], ["item_id,rater,dimension,score,flags"]
    tasks = ("dialogue", "recollection", "itinerary")
    for s in range(12):
        for m, model in enumerate(MODELS):
            for cond in ("sap", "baseline"):
                iid = f"s{s}-m{m}-{cond}"
                items.append({"id": iid, "task": tasks[s % 3], "scenario": f"s{s}",
                              "context": {"turns": [{"role": "user", "text": "hi"}]},
                              "response": "hello", "model": model, "condition": cond})
                q = 1 + 4 * rng.random()
                for r in range(4):
                    for k in range(len(LABELS)):
                        score = int(np.clip(round(q + rng.normal(0, 0.7)), 1, 5))
                        flag = "red_flag" if score == 1 and k == 1 else ""
                        rows.append(f"{iid},rater-{r},d{k},{score},{flag}")
    (tmp / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items),
                                     encoding="utf-8")
    (tmp / "ratings.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    h2h("import", "items", str(tmp / "items.jsonl"), "--db", db)
    h2h("import", "ratings", str(tmp / "ratings.csv"), "--db", db, "--add-raters")
    return db


def test_a_wide_study_still_fits_the_page(tmp_path):
    db = _stress_study(tmp_path)
    out = tmp_path / "report"
    h2h("report", "--db", db, "--out", str(out), "--bootstrap", "50", "--no-figures")
    _check_report(out, "stress")
    board = (out / "tables" / "leaderboard_humans.tex").read_text(encoding="utf-8")
    # eight dimension columns do not fit the page: later dimensions continue in further
    # floats, as do rows beyond a page, each numbered as the same table
    assert "(continued: " in board and "(continued)." in board
    assert board.count("\\label{") == 1
    assert board.count("\\addtocounter{table}{-1}") == board.count("\\begin{table*}") - 1
    assert "Empathy \\&" in board and "café-\\allowbreak{}bot" in board


def test_tex_escapes_and_breaks_long_names():
    assert tex("a_b & 50% #1 $x$ {y} ~ ^") == (
        "a\\_\\allowbreak{}b \\& 50\\% \\#1 \\$x\\$ \\{y\\} \\textasciitilde{} "
        "\\textasciicircum{}")
    assert tex("α ≥ .800, Δ −0.05") == "$\\alpha$ $\\geq$ .800, $\\Delta$ $-$0.05"
    # a name with no place to break gets one every 8 characters
    assert tex("CompanionModelWithoutAnyBreak") == (
        "Companio\\allowbreak{}nModelWi\\allowbreak{}thoutAny\\allowbreak{}Break")
    # Latin letters with accents are set by LaTeX itself, Chinese by the CJK package
    # (preamble.tex loads it when a table needs it); what pdflatex cannot set is "?"
    assert tex("café 模型，v2") == "café \\htzh{模型，}v2"
    assert tex("bot 😀") == "bot ?"


def test_chinese_labels_and_model_names_compile_and_print(tmp_path):
    """A study with a rubric written in Chinese only and Chinese model names (as a Chinese
    group's study is): the tables compile on the ACL page and in an article, and the PDF
    holds the Chinese names, not "??" (before, every Chinese character was set as "?")."""
    anchors = "\n".join(f'{v} = "{v} 级"' for v in range(1, 6))
    rubric = ('name = "陪伴评估量表"\ntasks = ["dialogue"]\nguidelines = "请评分。"\n'
              + "".join(f'[[dimensions]]\nkey = "{k}"\nlabel = "{label}"\nscale = "1..5"\n'
                        f"[dimensions.anchors]\n{anchors}\n"
                        for k, label in (("empathy", "共情与理解（情感反应）"),
                                         ("safety", "安全性"))))
    (tmp_path / "rubric.toml").write_text(rubric, encoding="utf-8")
    db = str(tmp_path / "zh.db")
    h2h("init", "--db", db, "--rubric", str(tmp_path / "rubric.toml"), "--name", "中文研究")
    rng = np.random.default_rng(5)
    models = ["通义千问-7b", "文心一言（SAP 版本）", "llama-3.1-8b"]
    items, rows = [], ["item_id,rater,dimension,score,flags"]
    for s in range(10):
        for m, model in enumerate(models):
            for cond in ("sap", "baseline"):
                iid = f"s{s}-m{m}-{cond}"
                items.append({"id": iid, "task": "dialogue", "scenario": f"s{s}",
                              "context": {"turns": [{"role": "user", "text": "你好"}]},
                              "response": "你好呀", "model": model, "condition": cond})
                q = 1 + 4 * rng.random()
                for r in range(3):
                    for k in ("empathy", "safety"):
                        score = int(np.clip(round(q + rng.normal(0, 0.6)), 1, 5))
                        rows.append(f"{iid},评分员{r},{k},{score},")
    out = _import_and_report(tmp_path, db, items, rows)
    pre = (out / "preamble.tex").read_text(encoding="utf-8")
    assert "\\usepackage{CJKutf8}" in pre
    board = (out / "tables" / "leaderboard_humans.tex").read_text(encoding="utf-8")
    assert "\\htzh{通义千问}" in board and "?" not in board.replace("?}", "")
    _check_report(out, "chinese")
    pdftotext = shutil.which("pdftotext")
    assert pdftotext, "pdftotext missing: `make test` installs Debian's poppler-utils"
    text = subprocess.run([pdftotext, str(out / "acl.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    for word in ("通义千问", "文心一言", "共情与理解", "安全性"):
        assert word in text, (word, text[:500])


def test_an_english_study_needs_no_cjk_package(demo_report):
    pre = (demo_report / "preamble.tex").read_text(encoding="utf-8")
    assert "CJK" not in pre and "\\htzh" not in (demo_report / "tables.tex").read_text(
        encoding="utf-8")


def _import_and_report(tmp_path, db: str, items: list[dict], rows: list[str]):
    """Import ``items`` (JSONL) and rating ``rows`` (CSV lines) into ``db``, write the report
    without figures (B = 50) and return its folder."""
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n"
                                                  for i in items), encoding="utf-8")
    (tmp_path / "ratings.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    h2h("import", "items", str(tmp_path / "items.jsonl"), "--db", db)
    h2h("import", "ratings", str(tmp_path / "ratings.csv"), "--db", db, "--add-raters")
    out = tmp_path / "report"
    h2h("report", "--db", db, "--out", str(out), "--bootstrap", "50", "--no-figures")
    return out


def test_a_tiny_study_with_nothing_estimable_and_hostile_names(tmp_path):
    """Four items, two raters, a binary dimension, no judges, names with HTML and TeX
    specials: the report is written, says what cannot be estimated instead of printing a
    number, compiles, and renders every name inert."""
    rubric = (RUBRIC + '[[dimensions]]\nkey = "warmth"\nlabel = "Warmth & <care>"\n'
              'scale = "1..5"\n[dimensions.anchors]\n'
              + "\n".join(f'{v} = "level {v}"' for v in range(1, 6))
              + '\n[[dimensions]]\nkey = "flag"\nlabel = "Risky reply?"\nscale = "binary"\n'
              '[dimensions.anchors]\n0 = "no"\n1 = "yes"\n')
    (tmp_path / "rubric.toml").write_text(rubric, encoding="utf-8")
    db = str(tmp_path / "tiny.db")
    h2h("init", "--db", db, "--rubric", str(tmp_path / "rubric.toml"), "--name",
        "Tiny <b>study</b> & co")
    models = ["<script>alert(1)</script>", "100%_sure & $cheap$"]
    items = [{"id": f"i{k}", "task": "dialogue", "scenario": f"s{k // 2}",
              "context": {"turns": [{"role": "user", "text": "hi"}]}, "response": "hello",
              "model": models[k % 2], "condition": "sap" if k < 2 else "baseline"}
             for k in range(4)]
    rows = ["item_id,rater,dimension,score"] + [
        f"i{k},{r},{d},{(k + j) % 5 + 1 if d == 'warmth' else (k + j) % 2}"
        for k in range(4) for j, r in enumerate(("Dr_Lee_x_", "Sam+Co"))
        for d in ("warmth", "flag")]
    out = _import_and_report(tmp_path, db, items, rows)
    html = (out / "report.html").read_text(encoding="utf-8")
    # (rater names can hold no markup since issue 11; the underscores still test the
    # Markdown escaping)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Human agreement is not estimable" in html
    md = (out / "report.md").read_text(encoding="utf-8")
    # names reach Markdown escaped (no HTML, no math, no emphasis), and a CI from one reply
    # per condition is no CI: the SAP effect is printed without brackets
    assert "Warmth & &lt;care&gt;" in md and "<script>" not in md and "\\$cheap\\$" in md
    assert "not estimable" in md and "−2.00 [" not in md and "−2.00" in md
    # imported without a flags column: the flags were never recorded, not "none raised"
    assert "Safety red flags: not recorded" in md and "no rater flagged" not in md
    assert "Highest mean" not in md.split(
        "### Risky reply?")[1].split("##")[0]
    agreement = (out / "tables" / "agreement.tex").read_text(encoding="utf-8")
    assert "{---}" in agreement and "not estimable" in agreement
    assert "Warmth \\& $<$care$>$" in agreement
    _check_report(out, "tiny")


def _pdf_words(pdf) -> list[tuple[float, float, float, str]]:
    """The words of the PDF's first page as (x from, y, x to, word): pdftotext's word boxes."""
    pdftotext = shutil.which("pdftotext")
    assert pdftotext, "pdftotext missing: `make test` installs Debian's poppler-utils"
    xml = subprocess.run([pdftotext, "-f", "1", "-l", "1", "-bbox", str(pdf), "-"],
                         capture_output=True, text=True, check=True).stdout
    return [(float(x0), float(y), float(x1), w) for x0, y, x1, w in
            re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)"[^>]*>([^<]*)'
                       r'</word>', xml)]


def _pdf_lines(pdf) -> list[list[str]]:
    """The words of the PDF's first page by line, top to bottom."""
    lines: dict[int, list[str]] = {}
    for _, y, _, w in _pdf_words(pdf):
        key = next((k for k in lines if abs(k - round(y)) <= 2), round(y))
        lines.setdefault(key, []).append(w)
    return [lines[k] for k in sorted(lines)]


def test_a_ci_stays_under_its_estimate_when_a_long_name_wraps(tmp_path):
    """A model name that wraps over three lines of a column table: the CI line follows its
    estimate's line directly (LaTeX put it under the name's last line, two lines further
    down), the name's first line is beside the estimate, and a signed CI carries its +."""
    from analysis.report.latex import PREAMBLE, table_tex
    from analysis.report.paper import Col, Est, PaperTable

    names = ["meta-llama/Llama-3.1-70B-Instruct-Turbo-companion (SAP, long run)", "m2"]
    t = PaperTable("wrap", "A table", "Caption.",
                   (Col("Model", "wrap"), Col("n", "count"), Col("Empathy", "points"),
                    Col("Safety Δ", "points", signed=True)),
                   ((names[0], 61, Est(4.41, 4.2, 4.6), Est(0.25, 0.03, 0.51)),
                    (names[1], 43, Est(3.38, 3.21, 3.57), Est(-0.2, -0.41, 0.02))))
    (tmp_path / "preamble.tex").write_text(PREAMBLE, encoding="utf-8")
    (tmp_path / "wrap.tex").write_text(table_tex(t), encoding="utf-8")
    assert compile_problems(tmp_path, "acl", ACL, "\\input{wrap}", "wrap-acl") == []
    lines = _pdf_lines(tmp_path / "acl.pdf")
    for est, ci in (("4.41", "[4.20,"), ("3.38", "[3.21,")):
        at = next(i for i, ln in enumerate(lines) if est in ln)
        assert ci in lines[at + 1], (est, lines[at:at + 3])
    assert lines[next(i for i, ln in enumerate(lines) if "4.41" in ln)][0].startswith("meta-")
    # the name is whole, on its lines, and nothing was set twice
    text = " ".join(w for ln in lines for w in ln)
    assert text.count("(SAP,") == 1 and "run)" in text
    assert "[+0.03," in text and "+0.51]" in text
    assert "[−0.41," in text or "[-0.41," in text


def _word_boxes(pdf) -> dict[str, tuple[float, float]]:
    """Each word of the PDF's first page (its first occurrence) with its box's x from/to."""
    boxes: dict[str, tuple[float, float]] = {}
    for x0, _, x1, w in _pdf_words(pdf):
        boxes.setdefault(w, (x0, x1))
    return boxes


@pytest.mark.parametrize("page", ["article", "acl"])
def test_best_values_are_bold_and_each_ci_is_centred_under_its_estimate(tmp_path, page):
    """The numbers' columns (siunitx ``S``) keep a best value's bold, and a CI line sits
    centred under its estimate, in the table's first number column and in its last (whose
    outer edge has no padding). pdffonts reads the fonts set; pdftotext the words' boxes."""
    from analysis.report.latex import PREAMBLE, table_tex
    from analysis.report.paper import Col, Est, PaperTable

    t = PaperTable("best", "A table", "Caption.",
                   (Col("Model", "wrap"), Col("n", "count"),
                    Col("Empathy and validation", "points"), Col("Safety", "points")),
                   (("m1", 61, Est(4.41, 4.2, 4.62, bold=True), Est(3.17, 2.93, 3.36)),
                    ("m2", 43, Est(3.38, 3.21, 3.57), Est(3.29, 3.04, 3.55, bold=True))))
    (tmp_path / "preamble.tex").write_text(PREAMBLE, encoding="utf-8")
    (tmp_path / "best.tex").write_text(table_tex(t), encoding="utf-8")
    template = ARTICLE if page == "article" else ACL.replace(r"\section{Results}", "")
    assert compile_problems(tmp_path, page, template, "\\input{best}", f"best-{page}") == []
    fonts = subprocess.run([shutil.which("pdffonts") or "pdffonts",
                            str(tmp_path / f"{page}.pdf")],
                           capture_output=True, text=True, check=True).stdout
    # Computer Modern's bold is CMBX, Times's (newtx or mathptmx) NimbusRomNo9L-Medi or a
    # "Bold" face: nothing else in the table is bold
    assert re.search(r"CMBX|Bold|-Medi\b", fonts), fonts
    boxes = _word_boxes(tmp_path / f"{page}.pdf")
    for est, ci_low, ci_high in (("4.41", "[4.20,", "4.62]"), ("3.38", "[3.21,", "3.57]"),
                                 ("3.17", "[2.93,", "3.36]"), ("3.29", "[3.04,", "3.55]")):
        mid = sum(boxes[est]) / 2
        ci_mid = (boxes[ci_low][0] + boxes[ci_high][1]) / 2
        assert abs(mid - ci_mid) < 0.6, (page, est, boxes[est], boxes[ci_low], boxes[ci_high])

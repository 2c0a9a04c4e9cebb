"""The report's LaTeX tables compiled by pdflatex, as a paper's author compiles them, against
the same tables in the form the report wrote before, measured side by side in the same run
(medians of interleaved repeats).

The tables are those of ``h2h report`` on a wide study (the stress study of
tests/analysis/test_report_latex.py: eight dimensions with long labels, twelve models), set in
plain ``article``. The reference is the same files with the two changes undone: the ``S``
columns' ``detect-weight`` (now ``reset-text-series=false``, which is what detect-weight does
in text mode, without its font checks) and each CI as braced text inside the ``S`` column
(now a one-column ``\\multicolumn`` beside siunitx; tabularx sets every table three or four
times to find its flexible column's width, and siunitx examined every cell each time). Both
must give the same PDF, page for page (pdftoppm's pixels compared), and the current form
must take at most 0.6 of the reference's time.

Stop 45, an idle 2-core machine: 2.53 s now, 6.19 s before (0.41); compiled by hand, the
ACL page 3.11 s against 6.20 s. Prints PASS or FAIL and exits non-zero on FAIL.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPEATS = 3
MAX_RATIO = 0.6


def _old_form(tex: str) -> str:
    tex = tex.replace("reset-text-series=false, mode=text", "detect-weight, mode=text")
    return re.sub(r"\\multicolumn\{1\}\{(?:@\{\})?c(?:@\{\})?\}\{(\\(?:footnotesize|scriptsize) "
                  r"[^{}]*)\}", r"{\1}", tex)


def _compile(folder: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           "article.tex"], cwd=folder, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"pdflatex failed in {folder}:\n{proc.stdout[-2000:]}")
    return elapsed


def _pages(folder: Path) -> list[bytes]:
    subprocess.run(["pdftoppm", "-r", "60", "-png", "article.pdf", "page"], cwd=folder,
                   check=True)
    return [p.read_bytes() for p in sorted(folder.glob("page-*.png"))]


def main() -> int:
    if not (shutil.which("pdflatex") and shutil.which("pdftoppm")):
        print("SKIPPED: pdflatex and pdftoppm are needed (make test installs them)")
        return 0
    from tests.analysis.test_report_latex import ARTICLE, _stress_study
    from tests.helpers import run_h2h

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        db = _stress_study(tmp)
        out = tmp / "report"
        run_h2h("report", "--db", db, "--out", str(out), "--bootstrap", "50", "--no-figures")
        folders = {"now": tmp / "now", "before": tmp / "before"}
        for name, folder in folders.items():
            folder.mkdir()
            shutil.copy(out / "preamble.tex", folder)
            shutil.copy(out / "tables.tex", folder)
            (folder / "tables").mkdir()
            for t in (out / "tables").glob("*.tex"):
                text = t.read_text(encoding="utf-8")
                (folder / "tables" / t.name).write_text(
                    text if name == "now" else _old_form(text), encoding="utf-8")
            (folder / "article.tex").write_text(ARTICLE.replace("%BODY%", "\\input{tables}\n"),
                                                encoding="utf-8")
        changed = sum((folders["now"] / "tables" / t.name).read_text(encoding="utf-8")
                      != (folders["before"] / "tables" / t.name).read_text(encoding="utf-8")
                      for t in (out / "tables").glob("*.tex"))
        times: dict[str, list[float]] = {"now": [], "before": []}
        for _ in range(REPEATS):
            for name, folder in folders.items():
                times[name].append(_compile(folder))
        same = _pages(folders["now"]) == _pages(folders["before"])
    now, before = (statistics.median(times[k]) for k in ("now", "before"))
    ratio = now / before
    print(f"the wide study's tables in article ({changed} table files differ in form): "
          f"{now:.2f} s now, {before:.2f} s in the form before; ratio {ratio:.2f} "
          f"(<= {MAX_RATIO}); the same pages: {same}")
    ok = same and ratio <= MAX_RATIO
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""`h2h report` on the demo study, end to end (B = 1000), against `h2h analyze --json` on the
same study with the same B, measured side by side in this run.

The report is the analysis plus its rendering: tables (HTML, Markdown, LaTeX, CSV), every
figure as PNG and SVG, and the manifest. Target: the whole report in at most 4x the time of
the analysis it contains, so that rendering never dwarfs the statistics.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 4.0


def timed(args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "annotate.cli", *args], capture_output=True,
                          text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    return elapsed, proc


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    db = tmp / "demo.db"
    subprocess.run([sys.executable, "-m", "annotate.cli", "demo", "--db", str(db)], check=True,
                   capture_output=True)
    t_analyze, _ = timed(["analyze", "--db", str(db), "--bootstrap", "1000", "--json",
                          "--out", str(tmp / "analysis.json")])
    t_report, proc = timed(["report", "--db", str(db), "--out", str(tmp / "report"),
                            "--bootstrap", "1000"])
    n_figs = len(list((tmp / "report" / "figures").glob("*.png")))
    ratio = t_report / t_analyze
    print(proc.stdout.strip().splitlines()[0])
    print(f"h2h report on the demo study: {t_report:.1f} s wall clock including process start, "
          f"{n_figs} figures as PNG + SVG; reference h2h analyze --json on the same study and "
          f"B: {t_analyze:.1f} s -> {ratio:.1f}x (target <= {TARGET:g}x)")
    ok = ratio <= TARGET
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""`h2h report` on the demo study, end to end (B = 1000), with the time of each step.
Requirement: under 60 s including the export of every figure as PNG and SVG."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    db = tmp / "demo.db"
    subprocess.run([sys.executable, "-m", "annotate.cli", "demo", "--db", str(db)], check=True,
                   capture_output=True)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "annotate.cli", "report", "--db", str(db),
                           "--out", str(tmp / "report"), "--bootstrap", "1000"],
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    n_figs = len(list((tmp / "report" / "figures").glob("*.png")))
    print(proc.stdout.strip().splitlines()[0])
    print(f"h2h report on the demo study: {elapsed:.1f} s wall clock including process start, "
          f"{n_figs} figures as PNG + SVG (requirement: < 60 s)")
    print("PASS" if elapsed < 60 else "FAIL")


if __name__ == "__main__":
    main()

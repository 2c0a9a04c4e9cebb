"""Run the whole test suite several times in a row with every core kept busy, to find tests
that only pass on a quiet machine (issue 17: no timing luck).

One CPU burner process per core (a busy loop at the suite's own priority) runs for as long as
the suite does; the suite runs
``--runs`` times; each run's result, duration and failing tests are printed, and the script
exits 1 if any run failed.

    .venv/bin/python scripts/suite_under_load.py --runs 10 [-- pytest arguments]

Without pytest arguments the suite runs as `make test` runs it (two xdist workers).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _burn(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(200_000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--burners", type=int, default=os.cpu_count() or 2,
                    help="busy processes beside the suite (default: one per core)")
    ap.add_argument("pytest_args", nargs="*",
                    help="passed on to pytest (after --); by default the workers `make test` "
                         "uses: -n 2 --dist loadfile (TEST_JOBS sets the 2)")
    args = ap.parse_args(argv)
    if not args.pytest_args:  # the suite as make test runs it, not one process
        args.pytest_args = ["-n", os.environ.get("TEST_JOBS", "2"), "--dist", "loadfile"]
    stop = mp.Event()
    burners = [mp.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.burners)]
    for b in burners:
        b.start()
    failures = 0
    try:
        for run in range(1, args.runs + 1):
            t0 = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                                   "no:cacheprovider", *args.pytest_args], cwd=ROOT,
                                  capture_output=True, text=True)
            took = time.monotonic() - t0
            tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or ["?"]
            failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", proc.stdout, re.M)
            print(f"run {run}/{args.runs}: exit {proc.returncode} in {took / 60:.1f} min — "
                  f"{tail[0]}", flush=True)
            for f in failed:
                print(f"    {f}", flush=True)
            if proc.returncode != 0:
                failures += 1
                log = ROOT / "test-artifacts" / f"under-load-run-{run}.log"
                log.parent.mkdir(exist_ok=True)
                log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
                print(f"    full output: {log}", flush=True)
    finally:
        stop.set()
        for b in burners:
            b.join(5)
    print(f"{args.runs - failures} of {args.runs} runs passed with {args.burners} CPU burners")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

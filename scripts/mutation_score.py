"""Print the mutation score of the last `make mutate` run and every surviving mutant.

Reads mutmut's per-file results under ``mutants/`` (the exit status of the tests for each
mutant: 1 or 3 = a test failed = killed, 0 = every test passed = survived; see mutmut's
``stats.status_by_exit_code``). The score is killed (timeouts included: the mutant made a test
run forever) over every mutant, so mutants no test reaches count against it. Survivors are
printed with their diff (``mutmut show``) unless ``--names`` is given. Mutants that are
equivalent to the original (no test can tell them apart) are listed with the reason in
``docs/mutation.md``; ``--check`` fails when a survivor is neither killed nor listed there.

    .venv/bin/python scripts/mutation_score.py [--names] [--check] [--min 0.85]
    .venv/bin/python scripts/mutation_score.py --only 'analysis.alpha.*'   # part of a run

``--only`` (fnmatch patterns, as ``mutmut run`` takes them) scores the mutants of a partial
run, e.g. ``mutmut run --max-children 2 'analysis.alpha.*'`` on a loaded machine.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KILLED = {1, 3, 36, 24, -24, 152, 255, 37}
STATUS = {0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", None: "not checked"}


def results() -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for meta in sorted((ROOT / "mutants").rglob("*.py.meta")):
        out.update(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
    return out


def status(code: int | None) -> str:
    return "killed" if code in KILLED else STATUS.get(code, f"exit {code}")


def listed_equivalents() -> set[str]:
    doc = (ROOT / "docs" / "mutation.md")
    if not doc.exists():
        return set()
    return set(re.findall(r"`(analysis\.[\w.ǁ]+__mutmut_\d+)`", doc.read_text("utf-8")))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--names", action="store_true", help="survivors by name only, no diffs")
    ap.add_argument("--check", action="store_true",
                    help="fail if a survivor is not listed as equivalent in docs/mutation.md")
    ap.add_argument("--min", type=float, default=0.85, help="the score to reach (0.85)")
    ap.add_argument("--only", nargs="+", metavar="PATTERN",
                    help="score only the mutants whose names match (fnmatch)")
    args = ap.parse_args(argv)
    res = results()
    if args.only:
        res = {k: c for k, c in res.items() if any(fnmatch.fnmatch(k, p) for p in args.only)}
    if not res:
        print("no mutmut results under mutants/: run `make mutate` first", file=sys.stderr)
        return 2
    counts = Counter(status(c) for c in res.values())
    total = len(res)
    killed = counts["killed"]
    score = killed / total
    by_file = Counter(k.split(".x")[0] for k, c in res.items() if status(c) != "killed")
    print(f"mutants: {total}; " + ", ".join(f"{n} {s}" for s, n in counts.most_common()))
    print(f"mutation score: {score:.1%} killed (target {args.min:.0%})")
    if by_file:
        print("not killed, by module: " + ", ".join(f"{m} {n}" for m, n in
                                                    by_file.most_common()))
    equivalent = listed_equivalents()
    open_ = [k for k, c in res.items() if status(c) != "killed" and k not in equivalent]
    survivors = [k for k, c in res.items() if status(c) != "killed"]
    print(f"\nnot killed: {len(survivors)} ({len(survivors) - len(open_)} listed as "
          "equivalent in docs/mutation.md)")
    for name in survivors:
        mark = "  (equivalent)" if name in equivalent else ""
        print(f"  {name}: {status(res[name])}{mark}")
        if not args.names and name not in equivalent:
            diff = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=ROOT,
                                  capture_output=True, text=True).stdout
            for line in diff.splitlines():
                if line.startswith(("- ", "+ ")) or line.startswith(("-  ", "+  ")):
                    print(f"      {line}")
    ok = score >= args.min and not (args.check and open_)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Re-inject plausible statistics bugs one at a time and check that a test catches each.

Issue 17 listed bugs that a reviewer injected into a scratch clone and that every test let
through (Pearson for Spearman, RMSE for MAE, ...). This script keeps them as data: each is one
textual edit of one file. For each bug it copies the working tree to a scratch folder, applies
the edit there (never here), runs the analysis tests with that copy first on the import path,
and prints whether a test failed (caught) or every test passed (survived).

    .venv/bin/python scripts/inject_bugs.py              # all bugs, tests/analysis + doctests
    .venv/bin/python scripts/inject_bugs.py 1 6 11       # some of them
    .venv/bin/python scripts/inject_bugs.py --list       # what each bug is

At the end the tests that caught a bug are run once more on the unmodified copy: each must
pass there, or its "caught" meant nothing. Exit status 1 when any bug survives or a catching
test fails without a bug. Each run takes from seconds (caught early) to about two
minutes (a bug that survives runs every test).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bug:
    id: int
    what: str
    file: str
    old: str
    new: str


BUGS = (
    # the thirteen the issue names
    Bug(1, "Pearson replaced by Spearman (judge and ceiling metrics)", "analysis/ceiling.py",
        'out["pearson"] = float(stats.pearsonr(x, c).statistic)',
        'out["pearson"] = float(stats.spearmanr(x, c).statistic)'),
    Bug(2, "RMSE replaced by MAE", "analysis/ceiling.py",
        '"rmse": float(np.sqrt(np.mean(d ** 2)))', '"rmse": float(np.mean(np.abs(d)))'),
    Bug(3, "Kendall tau-b replaced by tau-c", "analysis/ceiling.py",
        'variant="b"', 'variant="c"'),
    Bug(4, "Bland-Altman limits at 1.0 SD instead of 1.96", "analysis/judge_agreement.py",
        '"low": bias - 1.96 * sd, "high": bias + 1.96 * sd',
        '"low": bias - 1.0 * sd, "high": bias + 1.0 * sd'),
    Bug(5, "within-one counted as within-two (judge/ceiling)", "analysis/ceiling.py",
        "within = np.sum((diff <= 1.0 + 1e-9) & others, axis=1) / k",
        "within = np.sum((diff <= 2.0 + 1e-9) & others, axis=1) / k"),
    Bug(6, "leave-one-out consensus replaced by the all-raters mean", "analysis/ceiling.py",
        "c = (total[item] - x) / (n[item] - 1)", "c = total[item] / n[item]"),
    Bug(7, "Hayes-Krippendorff draw count cut fivefold", "analysis/alpha.py",
        "min(25 * q_nonzero,", "min(5 * q_nonzero,"),
    Bug(8, "Hayes-Krippendorff -1 floor dropped", "analysis/alpha.py",
        "boots = np.maximum(boots, -1.0)", "boots = boots"),
    Bug(9, "ICC(1,k) interval: the single-rater bounds copied", "analysis/icc.py",
        'out["ICC1k"] = ICCValue(icc1k, safe(lambda: 1 - 1 / fl), safe(lambda: 1 - 1 / fu))',
        'out["ICC1k"] = ICCValue(icc1k, safe(lambda: (fl - 1) / (fl + k - 1)),\n'
        '                            safe(lambda: (fu - 1) / (fu + k - 1)))'),
    Bug(10, "ICC(2,k) interval: Spearman-Brown with k instead of k - 1", "analysis/icc.py",
        "safe(lambda: lb2 * k / (1 + lb2 * (k - 1))),\n"
        "                            safe(lambda: ub2 * k / (1 + ub2 * (k - 1))))",
        "safe(lambda: lb2 * k / (1 + lb2 * k)),\n"
        "                            safe(lambda: ub2 * k / (1 + ub2 * k)))"),
    Bug(11, "bootstrap p-value without its +1", "analysis/resample.py",
        "2 * (k + 1) / (b.size + 1)", "2 * k / b.size"),
    Bug(12, "leaderboard per-item mean turned into a max", "analysis/leaderboard.py",
        '["score"]\n                .mean().rename("score")',
        '["score"]\n                .max().rename("score")'),
    Bug(13, "test-retest alpha at the interval level whatever the scale", "analysis/raters.py",
        "al = alpha(as_ratings(occ), level, values)",
        'al = alpha(as_ratings(occ), "interval", values)'),
    # three more of the kinds issue 17 asks to pin: the newer ceiling, verdict and ICC code
    Bug(14, "REML criterion without its log(1' H^-1 1) term (plain ML)", "analysis/reml.py",
        "return (self.n - 1) * np.log(rhr / (self.n - 1)) + logdet + np.log(one_h_one)",
        "return self.n * np.log(rhr / self.n) + logdet"),
    Bug(15, "verdict 'can replace' without the alternative annotator test",
        "analysis/verdict.py", "if lo > -margin and passed:", "if lo > -margin:"),
    Bug(16, "pairwise Cohen kappa as an unweighted mean over pairs", "analysis/chance.py",
        "num += shared * k\n        den += shared", "num += k\n        den += 1"),
)


def _copy_tree(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = ROOT / rel
        if not src.is_file():
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)


def _run(bug: Bug, scratch: Path, tests: list[str]) -> tuple[bool, str, float]:
    target = scratch / bug.file
    original = target.read_text(encoding="utf-8")
    if original.count(bug.old) != 1:
        raise SystemExit(f"bug {bug.id}: the text to replace occurs {original.count(bug.old)} "
                         f"times in {bug.file} (expected once); update scripts/inject_bugs.py")
    target.write_text(original.replace(bug.old, bug.new), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(scratch), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p",
                               "no:cacheprovider", "-W", "ignore", *tests], cwd=scratch,
                              env=env, capture_output=True, text=True)
    finally:
        target.write_text(original, encoding="utf-8")
    took = time.monotonic() - t0
    failed = [ln.split(" ")[1] for ln in proc.stdout.splitlines() if ln.startswith("FAILED ")]
    if proc.returncode == 0:
        return False, "", took
    if proc.returncode != 1:  # collection error, usage error: not a caught bug
        raise SystemExit(f"bug {bug.id}: pytest exited {proc.returncode}:\n{proc.stdout[-3000:]}")
    return True, failed[0] if failed else "(doctest or error)", took


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*", type=int, help="bug numbers (default: all)")
    ap.add_argument("--list", action="store_true", help="list the bugs and exit")
    pinned = sorted((ROOT / "tests" / "analysis").glob("test_pinned_*.py"))
    others = sorted(set((ROOT / "tests" / "analysis").glob("test_*.py")) - set(pinned))
    ap.add_argument("--tests", nargs="+", default=[
        # each file named in order (a folder argument would be collected in its own order):
        # the tests that pin the printed numbers first, so a caught bug stops early (-x)
        *(str(p.relative_to(ROOT)) for p in pinned + others), "analysis"],
        help="test paths to run (default: every test under tests/analysis and the doctests)")
    args = ap.parse_args(argv)
    chosen = [b for b in BUGS if not args.ids or b.id in args.ids]
    if args.list:
        for b in chosen:
            print(f"{b.id:>2}  {b.file:<24} {b.what}")
        return 0
    survived, catching = [], []
    with tempfile.TemporaryDirectory(prefix="h2h-bugs-") as tmp:
        scratch = Path(tmp)
        _copy_tree(scratch)
        print(f"{'bug':>3}  {'result':<8} {'secs':>5}  what / first failing test", flush=True)
        for b in chosen:
            caught, test, took = _run(b, scratch, args.tests)
            print(f"{b.id:>3}  {'caught' if caught else 'SURVIVED':<8} {took:5.0f}  {b.what}"
                  + (f"\n{'':>20}{test}" if caught else ""), flush=True)
            if not caught:
                survived.append(b.id)
            elif "::" in test:
                catching.append(test)
        clean_ok = True
        if catching:  # the catching tests on the tree without any bug
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "-W", "ignore", *sorted(set(catching))], cwd=scratch,
                                  env={**os.environ, "PYTHONPATH": str(scratch)},
                                  capture_output=True, text=True)
            clean_ok = proc.returncode == 0
            print(f"\nthe {len(set(catching))} catching tests on the unmodified tree: "
                  + ("all pass" if clean_ok else f"FAIL\n{proc.stdout[-2000:]}"))
    print(f"\n{len(chosen) - len(survived)} of {len(chosen)} caught"
          + (f"; survived: {', '.join(map(str, survived))}" if survived else ""))
    return 1 if survived or not clean_ok else 0


if __name__ == "__main__":
    sys.exit(main())

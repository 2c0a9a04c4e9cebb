"""Start-up of the `h2h` command: `h2h --help` against importing typer and rich alone.

Every command pays for what the root command imports before it runs, so `h2h --help` is the
floor of every command. Reference, measured side by side in this run with the same Python:
`python -c "import typer, rich"` (the two libraries the command line is built on). Runs are
interleaved (reference, h2h --help, the other help screens, ...) after two warm-up rounds;
medians of wall time per process (the target), and of CPU time (user + system), which a busy
machine disturbs less.

Target (issue 16): `h2h --help` at most 5x the reference. `h2h serve --help` and
`h2h raters --help` are printed for information (typer builds their option parsers first).

    python benchmarks/bench_cli_startup.py [--runs 21]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

TARGET = 5.0


def h2h_command() -> list[str]:
    """The `h2h` console script of this environment (as users run it), else the module."""
    script = Path(sys.executable).with_name("h2h")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "annotate.cli"]


def run(cmd: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one process, in seconds."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    h2h = h2h_command()
    cases = {
        'python -c "import typer, rich"': [sys.executable, "-c", "import typer, rich"],
        "h2h --help": [*h2h, "--help"],
        "h2h serve --help": [*h2h, "serve", "--help"],
        "h2h raters --help": [*h2h, "raters", "--help"],
        'python -c "pass"': [sys.executable, "-c", "pass"],
    }
    walls: dict[str, list[float]] = {k: [] for k in cases}
    cpus: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(args.runs + 2):
        for name, cmd in cases.items():
            wall, cpu = run(cmd)
            if r >= 2:
                walls[name].append(wall)
                cpus[name].append(cpu)
    ref_name = 'python -c "import typer, rich"'
    ref_wall, ref_cpu = _median(walls[ref_name]), _median(cpus[ref_name])
    print(f"median of {args.runs} interleaved runs (wall time / CPU time):")
    for name in cases:
        w, c = _median(walls[name]), _median(cpus[name])
        print(f"  {name:32s} {w * 1000:5.0f} ms ({w / ref_wall:.1f}x) / {c * 1000:5.0f} ms CPU "
              f"({c / ref_cpu:.1f}x)")
    ratio = _median(walls["h2h --help"]) / ref_wall
    cpu_ratio = _median(cpus["h2h --help"]) / ref_cpu
    print(f"h2h --help: {ratio:.1f}x `import typer, rich` in wall time (target <= "
          f"{TARGET:.0f}x); {cpu_ratio:.1f}x in CPU time")
    ok = ratio <= TARGET
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Run every benchmark script in this folder (`make bench`) and print their reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
failed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"\n=== {script.name} ===", flush=True)
    if subprocess.call([sys.executable, str(script)], cwd=here.parent) != 0:
        failed.append(script.name)
if failed:
    sys.exit(f"benchmarks failed: {', '.join(failed)}")

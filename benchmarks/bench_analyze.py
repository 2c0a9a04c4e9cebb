"""`h2h analyze --json` on an H2HTalk-sized study: 4,650 items x 3 dimensions x 5 raters plus
2 judges, B = 1,000, end to end as a user runs it (process start, CSV reading, every
coefficient, bootstrap CIs, judge metrics and alt-tests). Requirement: under 20 s."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

N_ITEMS, N_RATERS, DIMS = 4_650, 5, ("empathy", "safety", "fluency")


def main() -> None:
    rng = np.random.default_rng(7)
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    rows, jrows = [], []
    for d in DIMS:
        mu = rng.normal(3.2, 1, N_ITEMS)
        s = np.clip(np.rint(mu[:, None] + rng.normal(0, 0.8, (N_ITEMS, N_RATERS))), 1, 5)
        for j in range(N_RATERS):
            rows.append(pd.DataFrame({"item_id": [f"it{i:05d}" for i in range(N_ITEMS)],
                                      "rater": f"psych-{j + 1}", "dimension": d,
                                      "score": s[:, j].astype(int)}))
        for name, noise in (("claude-judge-v1", 0.6), ("claude-judge-v2", 1.0)):
            js = np.clip(np.rint(mu + rng.normal(0, noise, N_ITEMS)), 1, 5).astype(int)
            jrows.append(pd.DataFrame({"item_id": [f"it{i:05d}" for i in range(N_ITEMS)],
                                       "judge": name, "dimension": d, "score": js}))
    ratings, judges = tmp / "ratings.csv", tmp / "judges.csv"
    pd.concat(rows).to_csv(ratings, index=False)
    pd.concat(jrows).to_csv(judges, index=False)
    n_r = sum(len(x) for x in rows)
    n_j = sum(len(x) for x in jrows)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "annotate.cli", "analyze", "--ratings",
                           str(ratings), "--judges", str(judges), "--bootstrap", "1000",
                           "--seed", "1", "--scale", "empathy=1..5", "--scale", "safety=1..5",
                           "--scale", "fluency=1..5", "--json", "--out", str(tmp / "a.json")],
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    print(f"h2h analyze --json: {N_ITEMS} items x {len(DIMS)} dimensions x {N_RATERS} raters "
          f"({n_r} ratings) + 2 judges ({n_j} judgments), B = 1000: {elapsed:.1f} s "
          "(requirement: < 20 s)")
    print("PASS" if elapsed < 20 else "FAIL")


if __name__ == "__main__":
    main()

"""`h2h analyze --json` on an H2HTalk-sized study: 4,650 items x 3 dimensions x 5 raters plus
2 judges, B = 1,000, end to end as a user runs it (process start, CSV reading, every
coefficient, bootstrap CIs, judge metrics and alt-tests).

Reference, measured in the same run on the same CSV: what a researcher does with the standard
package to get a bootstrap CI for alpha alone — read the CSV with pandas, pivot each dimension
to raters x items, and call ``krippendorff.alpha`` (ordinal) on B = 1,000 item resamples per
dimension. The naive loop is timed on its first 50 resamples per dimension and scaled to
1,000 (the resamples are independent and alike, so the time is linear in B).

Target: the whole `h2h analyze` (every coefficient, every CI, both judges) in at most 0.33x
the time of that reference's alpha CIs alone.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd

N_ITEMS, N_RATERS, DIMS = 4_650, 5, ("empathy", "safety", "fluency")
B, B_TIMED, TARGET = 1_000, 50, 0.33


def reference(ratings: Path) -> float:
    """Seconds for the naive bootstrap of ordinal alpha on every dimension, B = 1,000."""
    t0 = time.perf_counter()
    df = pd.read_csv(ratings)
    rng = np.random.default_rng(1)
    for d in DIMS:
        m = df[df["dimension"] == d].pivot(index="rater", columns="item_id", values="score")
        x = m.to_numpy(float)
        for _ in range(B_TIMED):
            idx = rng.integers(0, x.shape[1], x.shape[1])
            krippendorff.alpha(x[:, idx], level_of_measurement="ordinal",
                               value_domain=[1, 2, 3, 4, 5])
    return (time.perf_counter() - t0) * B / B_TIMED


def main() -> int:
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
    ref = reference(ratings)
    ratio = elapsed / ref
    print(f"h2h analyze --json: {N_ITEMS} items x {len(DIMS)} dimensions x {N_RATERS} raters "
          f"({n_r} ratings) + 2 judges ({n_j} judgments), B = {B}: {elapsed:.1f} s")
    print(f"reference, naive bootstrap of ordinal alpha alone (pandas + krippendorff.alpha per "
          f"resample, {B_TIMED} timed per dimension, scaled to B = {B}): {ref:.1f} s")
    print(f"h2h analyze (everything) takes {ratio:.3f}x the reference's alpha CIs "
          f"(target <= {TARGET:g}x)")
    ok = ratio <= TARGET
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

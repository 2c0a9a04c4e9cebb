"""Validity of the prediction-powered leaderboard over 1,000 simulated studies.

Each study: six companion models with 500 replies each, a psychologists' panel (three raters,
their mean is the item's human value) on a uniform random fifth (100 per model), and a judge
whose bias differs by model (it flatters model m4 by 0.9 points; see benchmarks/ppi_sim.py).
For every model: the humans-only mean, the judge-only mean and the combined PPI++ mean
(:func:`analysis.ppi.ppi_mean`) with 95% CIs, against the model's true mean.

Targets: the combined CIs cover the true means 93-97% of the time; they are at most 0.85 as
wide as the humans-only CIs on average; and their width ratio is within 0.03 of the theory,
sqrt(1 - rho^2 N/(N+n)) for n human-rated and N judge-only items (sqrt(1 - rho^2) as N grows;
rho: the judge-human correlation of the model, from 200,000 items).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ppi_sim import BIAS, MODELS, simulate, truth  # noqa: E402

from analysis.ppi import classical_mean, ppi_mean  # noqa: E402

N_STUDIES, N_ITEMS, SHARE = 1000, 500, 0.2


def main() -> int:
    t0 = time.perf_counter()
    true = truth()
    h_big, j_big, _ = simulate(np.random.default_rng(777), 200_000)
    rho = np.array([np.corrcoef(h_big[k], j_big[k])[0, 1] for k in range(len(MODELS))])
    n = int(SHARE * N_ITEMS)
    N = N_ITEMS - n
    theory = np.sqrt(1 - rho ** 2 * N / (N + n))
    rng = np.random.default_rng(2024)
    k_models = len(MODELS)
    hit = {"combined": np.zeros(k_models), "human": np.zeros(k_models),
           "judge": np.zeros(k_models)}
    ratio = np.zeros((N_STUDIES, k_models))
    for s in range(N_STUDIES):
        human, judge, _ = simulate(rng, N_ITEMS)
        for k in range(k_models):
            lab = rng.permutation(N_ITEMS) < n
            c = ppi_mean(human[k, lab], judge[k, lab], judge[k, ~lab])
            h = classical_mean(human[k, lab])
            j = classical_mean(judge[k])
            for name, e in (("combined", c), ("human", h), ("judge", j)):
                hit[name][k] += e.low <= true[k] <= e.high
            ratio[s, k] = c.width / h.width
    cov = {k: v / N_STUDIES for k, v in hit.items()}
    total = {k: v.mean() for k, v in cov.items()}
    se = (total["combined"] * (1 - total["combined"]) / (N_STUDIES * k_models)) ** 0.5
    print(f"{N_STUDIES} studies x {k_models} models x {N_ITEMS} replies, humans on a fifth "
          f"(n = {n}, N = {N} judge-only per model), 95% CIs "
          f"({time.perf_counter() - t0:.1f} s)")
    print(f"{'model':<6} {'bias':>5} {'rho':>5} {'combined':>9} {'humans':>7} {'judge':>7} "
          f"{'width ratio':>11} {'theory':>7} {'sqrt(1-rho^2)':>14}")
    for k, m in enumerate(MODELS):
        print(f"{m:<6} {BIAS[k]:>+5.1f} {rho[k]:>5.3f} {cov['combined'][k]:>9.1%} "
              f"{cov['human'][k]:>7.1%} {cov['judge'][k]:>7.1%} {ratio[:, k].mean():>11.3f} "
              f"{theory[k]:>7.3f} {np.sqrt(1 - rho[k] ** 2):>14.3f}")
    mean_ratio = ratio.mean()
    gap = np.abs(ratio.mean(0) - theory).max()
    print(f"coverage: combined {total['combined']:.1%} (± {1.96 * se:.1%}), humans only "
          f"{total['human']:.1%}, judge only {total['judge']:.1%}")
    print(f"mean width ratio combined / humans only {mean_ratio:.3f} (target <= 0.85); "
          f"largest gap to theory {gap:.3f} (target <= 0.03)")
    ok = 0.93 <= total["combined"] <= 0.97 and mean_ratio <= 0.85 and gap <= 0.03
    print("combined coverage 93-97%, width ratio <= 0.85 and as theory says:",
          "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

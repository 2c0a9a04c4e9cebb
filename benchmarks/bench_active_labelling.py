"""Active labelling against uniform random assignment at the same human budget.

Six models with 4,650 replies each (H2HTalk's scenarios per model), judged in full; a budget
of 100 human-rated replies per model (600 per study, three psychologists each):

* uniform: 100 replies per model picked at random, estimated by PPI++
  (:func:`analysis.ppi.ppi_mean`, what `h2h leaderboard` does without draws);
* active: a uniform first round of 30 per model, then the other 420 picked by
  :func:`analysis.active.plan_arrays` (the planner `h2h assign --to-shrink` runs: the split
  across models that makes the sum of their standard errors smallest; within a model,
  probabilities proportional to the residual SD expected from the judge's sample spread,
  estimated from the first round alone, never below a fifth of uniform's) and estimated with
  inverse-probability weights (:func:`analysis.ppi.active_mean` with the leaderboard's
  strata), exactly as `h2h leaderboard` does.

Nothing is given to the planner that a study would not have: the judge's scores and sample
spreads, and the first round's human values.

Three judges (benchmarks/ppi_sim.py):

1. **self-consistent** — its samples spread on the replies it finds hard, and there its
   error is large; on clear-cut replies they agree and it is close to the psychologists.
   Active inference gains exactly when the judge's uncertainty tracks its error, as LLM
   judges' self-consistency does. Targets, here: mean CI width at most 0.85 of uniform's,
   coverage 93-97% for both designs.
2. **the coverage benchmark's judge** — every reply's quality is continuous, so the
   psychologists' own rounding and disagreement dominate the residual everywhere; the spread
   says little. What active labelling gains there, printed; no target.
3. **self-consistent, spreads shuffled** — the same scores, the uncertainty signal permuted
   among each model's items: it says nothing. What is left (the split across models, the
   estimator's strata, the cost of the floor), printed; no target.

Also checked: "how many more ratings give ±0.1 on every model" (what `h2h assign
--to-shrink` prints, :func:`analysis.active.needed_for_halfwidth`): after the first round of
the self-consistent studies, its count beside the one the population's variances give, and
the half-width after rating as many as it says (uniformly): within 0.01 of 0.1 on average.

Exits 1 when a target is missed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ppi_sim import MODELS, simulate, simulate_selfconsistent  # noqa: E402

from analysis.active import needed_for_halfwidth, plan_arrays  # noqa: E402
from analysis.ppi import (  # noqa: E402
    active_mean,
    labelled_for_halfwidth,
    labelling_probability,
    ppi_mean,
)
from analysis.ppi_board import active_strata  # noqa: E402

N_MAIN, N_REF, N_CHECK = 1000, 200, 200
N_ITEMS, PER_MODEL, FIRST, HALF = 4650, 100, 30, 0.1
K = len(MODELS)
CODES = np.repeat(np.arange(K), N_ITEMS)


def _coverage_judge(rng, n):
    return simulate(rng, n, spread=True)


def _shuffled(rng, n):
    return simulate_selfconsistent(rng, n, shuffle_spread=True)


def run(sim, true: np.ndarray, n_studies: int, seed: int, check: int = 0) -> dict:
    """Both designs on ``n_studies`` simulated studies; ``check`` studies also test the
    planner's "how many more for ±0.1"."""
    rng = np.random.default_rng(seed)
    w_u, w_a, hit_u, hit_a, alloc, halves = [], [], 0, 0, np.zeros(K), []
    for s in range(n_studies):
        human, judge, spread = sim(rng, N_ITEMS)
        for k in range(K):  # uniform
            lab = rng.permutation(N_ITEMS) < PER_MODEL
            c = ppi_mean(human[k, lab], judge[k, lab], judge[k, ~lab])
            w_u.append(c.width)
            hit_u += c.low <= true[k] <= c.high
        first = np.stack([rng.permutation(N_ITEMS) < FIRST for _ in range(K)])
        seen = np.where(first, human, np.nan)
        plan = plan_arrays(CODES, first.ravel(), seen.ravel(), judge.ravel(), spread.ravel(),
                           budget=K * (PER_MODEL - FIRST), rng=rng)
        alloc += plan.allocation
        prob = plan.probability.reshape(K, N_ITEMS)
        picked = plan.picked.reshape(K, N_ITEMS)
        for k in range(K):
            lab = first[k] | picked[k]
            p = labelling_probability(FIRST / N_ITEMS, [prob[k]])
            st = active_strata(spread[k] == 0, np.ones(N_ITEMS, bool), lab)
            a = active_mean(judge[k], np.where(lab, human[k], np.nan), lab, p, strata=st)
            w_a.append(a.width)
            hit_a += a.low <= true[k] <= a.high
        if s < check:  # rate as many more as the planner says, uniformly
            for k in range(K):
                need = needed_for_halfwidth(seen[k], judge[k], HALF)
                if need is None:
                    continue
                more = rng.permutation(np.flatnonzero(~first[k]))[:max(0, need - FIRST)]
                lab = first[k].copy()
                lab[more] = True
                c = ppi_mean(human[k, lab], judge[k, lab], judge[k, ~lab])
                halves.append((k, need, c.width / 2))
    n = n_studies * K
    return {"uniform": float(np.mean(w_u)), "active": float(np.mean(w_a)),
            "ratio": float(np.mean(w_a) / np.mean(w_u)), "cov_u": hit_u / n, "cov_a": hit_a / n,
            "alloc": alloc / n_studies, "halves": np.array(halves).reshape(-1, 3)}


def population(sim) -> tuple[np.ndarray, list[int | None]]:
    """The models' true means and the human-rated items ±HALF truly needs (uniform picks),
    from 200,000 items per model."""
    human, judge, _ = sim(np.random.default_rng(12345), 200_000)
    need = [labelled_for_halfwidth(float(np.var(human[k])), float(np.var(judge[k])),
                                   float(np.cov(human[k], judge[k])[0, 1]), N_ITEMS, HALF)
            for k in range(K)]
    return human.mean(1), need


def _line(name: str, r: dict) -> str:
    return (f"{name}\n  uniform: mean CI width {r['uniform']:.4f}, coverage {r['cov_u']:.1%}\n"
            f"  active:  mean CI width {r['active']:.4f}, coverage {r['cov_a']:.1%}\n"
            f"  width ratio active / uniform {r['ratio']:.3f}; new picks per model "
            + ", ".join(f"{m} {a:.0f}" for m, a in zip(MODELS, r["alloc"], strict=True)))


def main() -> int:
    t0 = time.perf_counter()
    print(f"{K} models x {N_ITEMS} replies, judged in full; {PER_MODEL} human-rated per model "
          f"(active: {FIRST} uniform first, {PER_MODEL - FIRST} drawn); 95% CIs")
    true_sc, need_sc = population(simulate_selfconsistent)
    main_ = run(simulate_selfconsistent, true_sc, N_MAIN, 31, check=N_CHECK)
    print(_line(f"1. self-consistent judge, {N_MAIN} studies (TARGET: ratio <= 0.85, "
                "coverage 93-97% for both)", main_))
    ref = run(_coverage_judge, population(_coverage_judge)[0], N_REF, 32)
    print(_line(f"2. the coverage benchmark's judge: its spread says little, {N_REF} studies "
                "(no target)", ref))
    flat = run(_shuffled, true_sc, N_REF, 33)
    print(_line(f"3. self-consistent judge with its spreads shuffled: they say nothing, "
                f"{N_REF} studies (no target)", flat))
    h = main_["halves"]
    print(f"±{HALF:g}: what `h2h assign --to-shrink` says after the first round of {FIRST} "
          f"(human-rated items in all, uniform picks), against what the population needs, and "
          f"the half-width after rating as many as it says ({N_CHECK} studies)")
    for k, m in enumerate(MODELS):
        hk = h[h[:, 0] == k]
        print(f"  {m}: needs {need_sc[k]}, said median {np.median(hk[:, 1]):.0f} "
              f"(mean {hk[:, 1].mean():.0f}); then ±{hk[:, 2].mean():.3f} on average, "
              f"{np.mean(hk[:, 2] <= HALF):.0%} at or under ±{HALF:g}")
    print(f"  all models: ±{h[:, 2].mean():.4f} on average (target {HALF:g} ± 0.01)")
    ok_main = (main_["ratio"] <= 0.85 and 0.93 <= main_["cov_a"] <= 0.97
               and 0.93 <= main_["cov_u"] <= 0.97)
    ok_half = abs(h[:, 2].mean() - HALF) <= 0.01
    print(f"({time.perf_counter() - t0:.1f} s)")
    print("self-consistent judge: active at most 0.85x as wide, coverage 93-97%:",
          "PASS" if ok_main else "FAIL")
    print(f"the planner's count for ±{HALF:g} holds:", "PASS" if ok_half else "FAIL")
    ok = ok_main and ok_half
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

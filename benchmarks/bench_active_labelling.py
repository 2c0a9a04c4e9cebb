"""Active labelling against uniform random assignment at the same human budget.

The simulated studies of benchmarks/ppi_sim.py: six models with 500 replies each, a judge
(three samples per reply) whose bias differs by model and whose samples disagree on the
replies it misjudges. Budget: 100 human-rated replies per model on average (600 per study).

* uniform: 100 replies per model picked at random; PPI++ (:func:`analysis.ppi.ppi_mean`);
* active: a uniform first round of 30 per model, then the other 420 picked by
  :func:`analysis.active.plan_draw` (`h2h assign --to-shrink`: Neyman allocation across
  models, within a model by the judge's self-consistency), estimated with inverse-probability
  weights (:func:`analysis.ppi.active_mean`), exactly as `h2h leaderboard` does.

Targets: the active CIs' mean width at most 0.85 of the uniform ones, with coverage still
93-97%. Printed beside: the best any allocation by these strata could do (an oracle that
knows each stratum's true residual spread), which bounds what the judge's self-consistency
can buy here.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ppi_sim import MODELS, simulate, truth  # noqa: E402

from analysis.active import plan_draw  # noqa: E402
from analysis.ppi import active_mean, labelling_probability, ppi_mean  # noqa: E402
from analysis.scales import Scale  # noqa: E402

N_STUDIES, N_ITEMS, PER_MODEL, FIRST = 1000, 500, 100, 30
SCALES = {"empathy": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))}


IDS = np.array([[f"{m}-{i}" for i in range(N_ITEMS)] for m in MODELS])
ITEMS = pd.DataFrame({"item_id": IDS.ravel(), "model": np.repeat(MODELS, N_ITEMS)})


def _frames(human, judge, agree, first):
    j = pd.DataFrame({"item_id": IDS.ravel(), "dimension": "empathy",
                      "value": judge.ravel(), "agree": agree.ravel()})
    h = pd.DataFrame({"item_id": IDS[first], "dimension": "empathy", "value": human[first]})
    return IDS, ITEMS, h, j


def oracle_ratio(rng) -> float:
    """Width of the best per-stratum allocation / uniform, from one large study."""
    human, judge, agree = simulate(rng, 20_000)
    out = []
    for k in range(len(MODELS)):
        y, yh, st = human[k], judge[k], (~agree[k]).astype(int)
        v_all = np.var(y - np.polyval(np.polyfit(yh, y, 1), yh))
        parts = [(np.mean(st == s), np.var(y[st == s] - np.polyval(
            np.polyfit(yh[st == s], y[st == s], 1), yh[st == s]))) for s in (0, 1)]
        out.append(sum(w * np.sqrt(v) for w, v in parts) / np.sqrt(v_all))
    return float(np.mean(out))


def main() -> int:
    t0 = time.perf_counter()
    true = truth()
    rng = np.random.default_rng(31)
    k_models = len(MODELS)
    w_uni, w_act = [], []
    hit_uni = hit_act = 0
    for s in range(N_STUDIES):
        human, judge, agree = simulate(rng, N_ITEMS)
        for k in range(k_models):  # uniform
            lab = rng.permutation(N_ITEMS) < PER_MODEL
            c = ppi_mean(human[k, lab], judge[k, lab], judge[k, ~lab])
            w_uni.append(c.width)
            hit_uni += c.low <= true[k] <= c.high
        first = np.stack([rng.permutation(N_ITEMS) < FIRST for _ in range(k_models)])
        ids, items, h, j = _frames(human, judge, agree, first)
        plan = plan_draw(items, h, j, SCALES, budget=k_models * (PER_MODEL - FIRST), seed=s)
        picked = np.isin(ids, plan.picked)
        prob = pd.Series(plan.probability)
        for k, m in enumerate(MODELS):
            lab = first[k] | picked[k]
            p = labelling_probability(plan.rated_before[m], [prob.reindex(ids[k]).to_numpy()])
            a = active_mean(judge[k], np.where(lab, human[k], np.nan), lab, p,
                            strata=(~agree[k]).astype(int))
            w_act.append(a.width)
            hit_act += a.low <= true[k] <= a.high
    n = N_STUDIES * k_models
    cov_u, cov_a = hit_uni / n, hit_act / n
    ratio = float(np.mean(w_act) / np.mean(w_uni))
    print(f"{N_STUDIES} studies x {k_models} models x {N_ITEMS} replies; {PER_MODEL} human-"
          f"rated per model on average (active: {FIRST} uniform first, the rest drawn) "
          f"({time.perf_counter() - t0:.1f} s)")
    print(f"uniform: mean CI width {np.mean(w_uni):.3f}, coverage {cov_u:.1%}")
    print(f"active:  mean CI width {np.mean(w_act):.3f}, coverage {cov_a:.1%}")
    print(f"width ratio active / uniform {ratio:.3f} (target <= 0.85); oracle allocation by "
          f"these strata {oracle_ratio(np.random.default_rng(5)):.3f}")
    ok = ratio <= 0.85 and 0.93 <= cov_a <= 0.97
    print("active labelling at most 0.85x as wide with coverage 93-97%:",
          "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

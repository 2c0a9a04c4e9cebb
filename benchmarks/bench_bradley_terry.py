"""Bradley–Terry rankings: h2htalk's fit with a 1,000-resample scenario bootstrap against
choix's maximum-likelihood fit of the same data, in the same run.

Data: 50 models, 20,000 comparisons of random pairs (no ties, so choix fits the same model)
in 2,000 scenarios of 10 comparisons, drawn from Bradley–Terry strengths ~ N(0, 1), seed 2026.
Reference: ``choix.opt_pairwise(alpha=0)`` (one point estimate, no intervals), timed once.
Requirement: h2htalk's fit *with* B = 1,000 bootstrap resamples in at most 2 s (the best of
three runs: the machine is shared), and its point estimates within 1e-6 of choix's. Also
printed: the same with Davidson ties (10% ties), which choix cannot fit.
"""

from __future__ import annotations

import sys
import time

import numpy as np


def _data(ties: float, seed: int = 2026):
    rng = np.random.default_rng(seed)
    m, n = 50, 20_000
    beta = rng.normal(0, 1, m)
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    d = beta[i] - beta[j]
    nu = 0.0 if not ties else 2 * ties / (1 - ties)
    den = 2 * np.cosh(d / 2) + nu
    u = rng.random(n)
    pa, pt = np.exp(d / 2) / den, nu / den
    o = np.where(u < pa, "a", np.where(u < pa + pt, "tie", "b"))
    names = [f"model{k:02d}" for k in range(m)]
    return names, [names[x] for x in i], [names[x] for x in j], list(o), np.arange(n) // 10


def _best_of(k: int, fn):
    times, result = [], None
    for _ in range(k):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), times, result


def main() -> int:
    import choix

    from analysis.bradley_terry import bradley_terry

    names, a, b, o, cl = _data(0.0)
    bradley_terry(a[:500], b[:500], o[:500], clusters=cl[:500], B=10)  # warm-up
    t_ours, runs, res = _best_of(3, lambda: bradley_terry(a, b, o, players=names, clusters=cl,
                                                          B=1000, seed=1))
    idx = {p: k for k, p in enumerate(names)}
    data = [(idx[x], idx[y]) if w == "a" else (idx[y], idx[x]) for x, y, w in zip(a, b, o,
                                                                                   strict=True)]
    t0 = time.perf_counter()
    ref = choix.opt_pairwise(len(names), data, alpha=0.0, tol=1e-12)
    t_choix = time.perf_counter() - t0
    diff = float(np.max(np.abs(np.asarray(res.log_strength) - ref)))
    names_t, a_t, b_t, o_t, cl_t = _data(0.10)
    t_ties, _, res_t = _best_of(1, lambda: bradley_terry(a_t, b_t, o_t, players=names_t,
                                                         clusters=cl_t, B=1000, seed=1))
    print(f"data: 50 models, 20,000 comparisons in 2,000 scenarios; B = 1,000 scenario "
          f"resamples ({res.n_boot_valid} with a finite estimate)")
    print(f"h2htalk Bradley-Terry + bootstrap: {t_ours:.2f} s (best of "
          f"{', '.join(f'{t:.2f}' for t in runs)} s)")
    print(f"choix opt_pairwise, one fit, no intervals: {t_choix:.2f} s")
    print(f"ratio (h2htalk with 1,000 resamples / choix's one fit): {t_ours / t_choix:.2f}")
    print(f"largest difference of the log-strengths from choix's: {diff:.1e} "
          "(requirement: <= 1e-6)")
    print(f"with Davidson ties (10% ties, nu = {res_t.nu:.3f}): {t_ties:.2f} s "
          "(no reference: choix has no ties)")
    ok = t_ours <= 2.0 and diff <= 1e-6
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

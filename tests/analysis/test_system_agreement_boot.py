"""System-level agreement's scenario bootstrap recomputed by hand on an unbalanced design (the
models' means weighted by how many of their items each resample keeps), at a 90% level, and
near-ties of model means that differ only by rounding."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from analysis.refmetrics.system import rank_agreement, system_agreement
from analysis.resample import item_weights


def _design():
    """Five models, six scenarios; model A answered each scenario four times, the others once
    or twice, so the models' item counts differ within every resample."""
    rng = np.random.default_rng(3)
    model, scen, human, metric = [], [], [], []
    quality = {"A": 3.0, "B": 3.4, "C": 2.6, "D": 3.8, "E": 2.2}
    for s in range(6):
        for m, q in quality.items():
            for _ in range(4 if m == "A" else 1 + (s + ord(m)) % 2):
                h = q + rng.normal(0, 0.8)
                model.append(m)
                scen.append(f"s{s}")
                human.append(h)
                metric.append(h + rng.normal(0, 0.6))
    return np.array(human), np.array(metric), np.array(model), np.array(scen)


def test_the_bootstrap_of_tau_and_of_the_share_by_hand_at_90_percent():
    """Each resample draws scenarios (item_weights over the six, the library's seeded draw)
    and keeps all of their items: a model's mean is Σ_s w_s·sum_sm / Σ_s w_s·n_sm. Tau-b per
    resample from scipy's kendalltau (Kendall 1945); the interval is the 5th and 95th
    percentile."""
    human, metric, model, scen = _design()
    res = system_agreement(human, {"m": metric}, model, scen, B=300, seed=7, ci=0.9)
    models, scens = sorted(set(model)), sorted(set(scen))
    sums_h = np.array([[human[(model == m) & (scen == s)].sum() for m in models] for s in scens])
    sums_r = np.array([[metric[(model == m) & (scen == s)].sum() for m in models]
                       for s in scens])
    count = np.array([[((model == m) & (scen == s)).sum() for m in models] for s in scens])
    w = item_weights(len(scens), 300, 7)
    taus, shares = [], []
    for wb in w:
        h, r = (wb @ sums_h) / (wb @ count), (wb @ sums_r) / (wb @ count)
        taus.append(kendalltau(h, r).statistic)
        pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
        shares.append(np.mean([(h[i] - h[j]) * (r[i] - r[j]) > 0 for i, j in pairs]))
    row = res.rows["m"]
    assert row.kendall_tau_b.low == pytest.approx(np.quantile(taus, 0.05), abs=1e-12)
    assert row.kendall_tau_b.high == pytest.approx(np.quantile(taus, 0.95), abs=1e-12)
    assert row.pairwise_accuracy.low == pytest.approx(np.quantile(shares, 0.05), abs=1e-12)
    assert row.pairwise_accuracy.high == pytest.approx(np.quantile(shares, 0.95), abs=1e-12)
    # the point estimates: means over each model's items
    h_all = [human[model == m].mean() for m in models]
    r_all = [metric[model == m].mean() for m in models]
    assert row.kendall_tau_b.value == pytest.approx(kendalltau(h_all, r_all).statistic)
    # the interval is not degenerate, so the percentiles above tell levels apart
    assert row.kendall_tau_b.low < row.kendall_tau_b.high


def test_means_equal_up_to_rounding_are_a_tie():
    """0.1 + 0.2 and 0.3 differ by 5.6e-17 after rounding; two models with those human means
    are tied, so their pair counts neither for nor against the metric (tau-b with one tie in
    the humans, Kendall 1945: (2 − 0) / √((3 − 1)(3 − 0)) = 0.8165)."""
    h = np.array([[0.1 + 0.2, 0.3, 1.0]])
    r = np.array([[2.0, 0.0, 3.0]])
    tau, share = rank_agreement(h, r)
    assert tau[0] == pytest.approx(2 / np.sqrt(2 * 3), abs=1e-12)
    assert share[0] == 1.0

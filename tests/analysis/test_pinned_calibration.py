"""The calibration comparison's numbers pinned: point values on the hand-worked case of
``test_pinned_judge``, and every interval and paired difference against a straightforward
loop over the same item resamples (each statistic recomputed from the repeated rows with the
reference implementation: the krippendorff package for alpha, a plain QWK / MAE on the pairs).
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy import stats

from analysis.calibration import JudgeRun, compare_dimension
from analysis.ceiling import loo_pairs, value_qwk
from analysis.layout import Ratings
from analysis.options import AnalysisOptions
from analysis.resample import item_weights
from tests.analysis.test_pinned_judge import HUMAN, HUMANS, ITEMS, JUDGE, VALUES, J, M

J2 = np.array([2, 2, 4, 5, 4], float)


def test_point_values_by_hand():
    humans = Ratings(M, ITEMS, HUMANS)
    lengths = np.array([10.0, 40, 20, 50, 30])
    res = compare_dimension("empathy", humans,
                            {"J": JudgeRun(J, n_unscored=1, n_judgments=6), "K": JudgeRun(J2)},
                            "ordinal", VALUES, lengths=lengths, options=AnalysisOptions(B=0,
                            min_shared_items=2)).to_dict()
    j = res["configs"]["J"]
    assert j["qwk"]["value"] == pytest.approx(JUDGE["qwk"], abs=1e-12)
    assert j["mae"]["value"] == pytest.approx(JUDGE["mae"], abs=1e-12)
    assert j["bias"] == pytest.approx(JUDGE["bias"], abs=1e-12)
    kw = {"level_of_measurement": "ordinal", "value_domain": VALUES}
    assert j["alpha_with_judge"]["value"] == pytest.approx(
        krippendorff.alpha(np.column_stack([M, J]).T, **kw), abs=1e-12)
    assert res["human_ceiling"]["qwk"]["value"] == pytest.approx(HUMAN["qwk"], abs=1e-12)
    assert res["human_ceiling"]["mae"] == pytest.approx(HUMAN["mae"], abs=1e-12)
    assert res["human_ceiling"]["alpha_humans"] == pytest.approx(krippendorff.alpha(M.T, **kw),
                                                                 abs=1e-12)
    assert j["unscored_rate"] == pytest.approx(1 / 6)
    # verbosity: Spearman of the judge's scores (1 3 5 5 2) and of the humans' item means
    # (5/3 8/3 4 14/3 4) with reply length
    assert j["verbosity"]["judge"] == pytest.approx(stats.spearmanr(J, lengths).statistic)
    assert j["verbosity"]["humans"] == pytest.approx(
        stats.spearmanr(M.mean(axis=1), lengths).statistic)
    # misses: the humans' lower medians are 2 2 4 5 4, so i1 and i2 are "2 or lower"; J gives
    # them 1 and 3 (one missed), K gives 2 and 2 (none missed)
    assert j["misses"] == {"missed": 1, "of": 2, "what": "items the humans scored 2 or lower"}
    assert res["configs"]["K"]["misses"]["missed"] == 0
    # K: d = J2 - c = 0 .5 .5 | -1 -1 0 | -.5 0 .5 | 0 .5 .5 | .5 -.5 0 → MAE 6 / 15
    assert res["configs"]["K"]["mae"]["value"] == pytest.approx(6 / 15, abs=1e-12)
    assert res["verdict"]["best"] == "K"


def _case(seed=8, n=40, k=4):
    rng = np.random.default_rng(seed)
    latent = rng.normal(3, 1, n)
    m = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.8, (n, k))), 1, 5)
    m[rng.random(m.shape) < 0.25] = np.nan
    m[:, 0] = np.where(np.sum(~np.isnan(m), axis=1) < 2, 3.0, m[:, 0])  # every item 2+ humans
    m[:, 1] = np.where(np.sum(~np.isnan(m), axis=1) < 2, 3.0, m[:, 1])
    a = np.clip(np.rint(latent + rng.normal(0, 0.5, n)), 1, 5)
    b = np.clip(np.rint(latent + rng.normal(0, 1.0, n)), 1, 5)
    return m, a, b


def test_intervals_and_paired_differences_match_a_loop_over_the_same_resamples():
    m, a, b = _case()
    n = m.shape[0]
    assert np.all(np.sum(~np.isnan(m), axis=1) >= 2)
    B, seed = 300, 5
    res = compare_dimension("d", Ratings(m, tuple(range(n)), tuple("pqrs")),
                            {"a": JudgeRun(a), "b": JudgeRun(b)}, "ordinal", VALUES,
                            options=AnalysisOptions(B=B, seed=seed, min_shared_items=2)).to_dict()
    pairs = loo_pairs(m)
    w = item_weights(n, B, seed).astype(int)
    kw = {"level_of_measurement": "ordinal", "value_domain": VALUES}
    boots: dict[str, dict[str, list]] = {"a": {}, "b": {}, "ceiling": {}}
    for row in w:
        reps = row[pairs.item]
        c = np.repeat(pairs.c, reps)
        boots["ceiling"].setdefault("qwk", []).append(value_qwk(np.repeat(pairs.x, reps), c))
        rows = np.repeat(np.arange(n), row)
        for name, js in (("a", a), ("b", b)):
            x = np.repeat(js[pairs.item], reps)
            boots[name].setdefault("qwk", []).append(value_qwk(x, c))
            boots[name].setdefault("mae", []).append(np.mean(np.abs(x - c)))
            boots[name].setdefault("alpha_with_judge", []).append(krippendorff.alpha(
                np.column_stack([m[rows], js[rows]]).T, **kw))
    q = {k: {s: np.array(v) for s, v in d.items()} for k, d in boots.items()}

    def ci(x):
        return tuple(np.quantile(x, [0.025, 0.975]))

    for name in ("a", "b"):
        cfg = res["configs"][name]
        for metric in ("qwk", "mae", "alpha_with_judge"):
            lo, hi = ci(q[name][metric])
            assert (cfg[metric]["low"], cfg[metric]["high"]) == (
                pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9)), (name, metric)
        diff = cfg["vs_ceiling"]["difference"]
        lo, hi = ci(q[name]["qwk"] - q["ceiling"]["qwk"])
        assert (diff["low"], diff["high"]) == (pytest.approx(lo, abs=1e-9),
                                               pytest.approx(hi, abs=1e-9))
    hc = res["human_ceiling"]["qwk"]
    assert (hc["low"], hc["high"]) == tuple(pytest.approx(v, abs=1e-9)
                                            for v in ci(q["ceiling"]["qwk"]))
    for p in res["pairs"]:
        d = q[p["a"]][p["metric"]] - q[p["b"]][p["metric"]]
        lo, hi = ci(d)
        assert (p["low"], p["high"]) == (pytest.approx(lo, abs=1e-9),
                                         pytest.approx(hi, abs=1e-9)), p["metric"]
        va = res["configs"][p["a"]][p["metric"]]["value"]
        vb = res["configs"][p["b"]][p["metric"]]["value"]
        assert p["diff"] == pytest.approx(va - vb, abs=1e-12)
        # twice the smaller tail with the +1 correction
        k = min(np.sum(d <= 0), np.sum(d >= 0))
        assert p["p"] == pytest.approx(min(1.0, 2 * (k + 1) / (B + 1)), abs=1e-12)

"""Bootstrap intervals for alpha: reproducible, sensible, and equal in distribution to the
naive resample-and-recompute loop."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from analysis.alpha import alpha_bootstrap
from analysis.layout import Ratings


def _study(n_items=300, n_raters=5, noise=0.8, missing=0.2, seed=0) -> Ratings:
    rng = np.random.default_rng(seed)
    m = np.clip(np.rint(rng.normal(3, 1, n_items)[:, None]
                        + rng.normal(0, noise, (n_items, n_raters))), 1, 5)
    m[rng.random(m.shape) < missing] = np.nan
    return Ratings(m, tuple(range(n_items)), tuple(range(n_raters)))


def test_seeded_and_recorded():
    r = _study()
    a = alpha_bootstrap(r, "ordinal", B=500, seed=7)
    b = alpha_bootstrap(r, "ordinal", B=500, seed=7)
    c = alpha_bootstrap(r, "ordinal", B=500, seed=8)
    assert a == b and (a.low, a.high) != (c.low, c.high)
    assert a.as_dict() == {"method": "unit", "level": 0.95, "low": a.low, "high": a.high,
                           "B": 500, "seed": 7, "q_below_min": a.q_below_min}
    assert a.low < a.estimate < a.high


def test_unit_bootstrap_matches_naive_loop_in_distribution():
    # The vectorised unit bootstrap must give the same interval as resampling items and
    # calling the krippendorff package on each resample (up to Monte Carlo error).
    r = _study(n_items=400, seed=1)
    ours = alpha_bootstrap(r, "ordinal", B=2000, seed=3, values=[1, 2, 3, 4, 5])
    rng = np.random.default_rng(99)
    naive = [krippendorff.alpha(r.matrix[rng.integers(0, r.n_items, r.n_items)].T,
                                level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
             for _ in range(2000)]
    lo, hi = np.quantile(naive, [0.025, 0.975])
    assert ours.low == pytest.approx(lo, abs=0.012)
    assert ours.high == pytest.approx(hi, abs=0.012)


def test_q_below_min_tracks_the_threshold():
    r = _study(noise=1.4, seed=2)
    ci = alpha_bootstrap(r, "interval", B=1000, seed=1, alpha_min=ci_mid(r))
    assert 0.2 < ci.q_below_min < 0.8
    assert alpha_bootstrap(r, "interval", B=1000, seed=1, alpha_min=-1).q_below_min == 0.0


def ci_mid(r: Ratings) -> float:
    return alpha_bootstrap(r, "interval", B=200, seed=0).estimate


def test_hk_bootstrap_runs_and_brackets_the_estimate():
    r = _study(n_items=60, seed=4)
    ci = alpha_bootstrap(r, "ordinal", B=2000, seed=5, method="hk")
    assert ci.method == "hk" and ci.low < ci.estimate < ci.high
    assert ci.low >= -1


def test_independent_of_thread_count(monkeypatch):
    r = _study(seed=6)
    many = alpha_bootstrap(r, "ordinal", B=1000, seed=2)
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    one = alpha_bootstrap(r, "ordinal", B=1000, seed=2)
    assert (many.low, many.high) == (one.low, one.high)


def test_bad_options_are_named():
    r = _study(n_items=10)
    with pytest.raises(ValueError, match="B must be at least 1"):
        alpha_bootstrap(r, B=0)
    with pytest.raises(ValueError, match="method must be"):
        alpha_bootstrap(r, method="jackknife")  # type: ignore[arg-type]


def _naive_hk(m: np.ndarray, level: str, values: list[float], B: int, seed: int) -> np.ndarray:
    """Hayes & Krippendorff (2007) written out from the paper and the KALPHA macro, loop by
    loop: the coincidence matrix from every ordered pair of values within a unit (each
    weighted 1 / (m_u - 1)), then per resample M pairable values drawn from its cells with
    probability o_ck / n, alpha_b = 1 - sum of the drawn d_ck / (M D_e), floored at -1. M =
    min(25 Q, (m - 1) n / 2), Q the non-empty cells, m the number of raters."""
    v = np.asarray(values, float)
    idx = {x: i for i, x in enumerate(v)}
    o = np.zeros((len(v), len(v)))
    for row in m:
        got = [idx[x] for x in row if not np.isnan(x)]
        for a in range(len(got)):
            for b in range(len(got)):
                if a != b:
                    o[got[a], got[b]] += 1 / (len(got) - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "interval":
        d = (v[:, None] - v[None, :]) ** 2
    else:  # ordinal: (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2
        d = np.zeros_like(o)
        for c in range(len(v)):
            for k in range(len(v)):
                lo, hi = min(c, k), max(c, k)
                d[c, k] = (n_c[lo:hi + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2
    d_e = sum(n_c[c] * n_c[k] * d[c, k] for c in range(len(v)) for k in range(len(v))) \
        / (n * (n - 1))
    draws = int(round(min(25 * np.count_nonzero(o), (m.shape[1] - 1) * n / 2)))
    rng = np.random.default_rng(seed)
    cells = rng.choice(o.size, size=(B, draws), p=(o / n).ravel())
    return np.maximum(1 - d.ravel()[cells].sum(axis=1) / (draws * d_e), -1.0)


def test_hk_bootstrap_matches_a_naive_implementation():
    # Monte Carlo error of a 2.5% quantile at B = 4000 is about 0.005 here; cutting the number
    # of draws fivefold widens the interval by sqrt(5) and moves each bound by ~0.05.
    r = _study(n_items=60, n_raters=3, seed=4)
    ours = alpha_bootstrap(r, "ordinal", B=4000, seed=5, method="hk", values=[1, 2, 3, 4, 5])
    naive = _naive_hk(r.matrix, "ordinal", [1, 2, 3, 4, 5], 4000, 11)
    lo, hi = np.quantile(naive, [0.025, 0.975])
    assert ours.low == pytest.approx(lo, abs=0.015)
    assert ours.high == pytest.approx(hi, abs=0.015)
    assert (ours.high - ours.low) == pytest.approx(hi - lo, rel=0.08)


def test_hk_bootstrap_floors_alpha_at_minus_one():
    # Two raters who disagree systematically on 6 items: M = (2 - 1) n / 2 = 6 draws per
    # resample, so alpha_b falls below -1 in about a tenth of the resamples; they count as -1.
    m = np.array([[1, 5], [5, 1], [2, 4], [4, 2], [1, 3], [3, 5]], float)
    r = Ratings(m, tuple(range(6)), ("a", "b"))
    naive = _naive_hk(m, "interval", [1, 2, 3, 4, 5], 4000, 3)
    assert np.mean(naive == -1.0) > 0.05  # the floor matters for the 2.5% bound here
    ci = alpha_bootstrap(r, "interval", B=4000, seed=2, method="hk", values=[1, 2, 3, 4, 5])
    assert ci.low == -1.0 == np.quantile(naive, 0.025)
    assert ci.high == pytest.approx(np.quantile(naive, 0.975), abs=0.05)


def _hk(m, B=2000, seed=1):
    from analysis.alpha import _hk_boot
    from analysis.layout import counts_matrix

    vals = np.array([1.0, 2, 3, 4, 5])
    return _hk_boot(counts_matrix(np.asarray(m, float), vals), 2, "interval", vals, B, seed)


def test_hk_sets_the_perfect_resamples_of_one_used_value_to_zero():
    # Two raters agree on 3 five times and once say 3 and 4: o_33 = 10, o_34 = o_43 = 1,
    # n = 12, M = (2 - 1) 12 / 2 = 6 draws. With one used diagonal cell, KALPHA sets every
    # alpha_b = 1 (all six draws on the diagonal, (10/12)^6 = 33% of resamples) to 0.
    b = _hk([[3, 3]] * 5 + [[3, 4]])
    assert not np.any(b == 1.0)
    assert set(np.unique(b)) == {-1.0, 0.0}  # one off-diagonal draw gives exactly 0
    r = Ratings(np.array([[3, 3]] * 5 + [[3, 4]], float), tuple(range(6)), ("a", "b"))
    ci = alpha_bootstrap(r, "interval", B=2000, seed=1, method="hk", values=[1, 2, 3, 4, 5])
    assert ci.high == 0.0  # 1.0 without the correction


def test_hk_zeroes_the_expected_number_of_perfect_resamples():
    # Agreement on 3 (five units) and on 4 (three units), one 3-4 unit: o_33 = 10, o_44 = 6,
    # n = 18, 9 pairs in all. KALPHA sets round(B sum_c (o_cc / n)^pairs) of the resamples
    # with alpha_b = 1 to 0: round(2000 ((10/18)^9 + (6/18)^9)) = round(10.17) = 10.
    b = _hk([[3, 3]] * 5 + [[4, 4]] * 3 + [[3, 4]])
    assert np.sum(b == 0.0) == round(2000 * ((10 / 18) ** 9 + (6 / 18) ** 9)) == 10
    assert np.sum(b == 1.0) > 500  # the rest of the perfect resamples stay at 1


def test_hk_on_one_pair_and_without_pairs():
    # One unit rated 1 and 2: n = 2, D_e = 1, M = 1 draw, always the off-diagonal cell, so
    # every alpha_b = 1 - 1 / (1 * 1) = 0, as the estimate itself
    one = Ratings(np.array([[1.0, 2.0]]), (0,), ("a", "b"))
    ci = alpha_bootstrap(one, "interval", B=50, seed=0, method="hk", values=[1, 2, 3])
    assert (ci.estimate, ci.low, ci.high, ci.n_valid) == (0.0, 0.0, 0.0, 50)
    # no unit with two ratings, or no variance: nothing to resample, no interval
    lone = Ratings(np.array([[1.0, np.nan], [np.nan, 2.0]]), (0, 1), ("a", "b"))
    same = Ratings(np.full((4, 2), 3.0), tuple(range(4)), ("a", "b"))
    for r in (lone, same):
        ci = alpha_bootstrap(r, "interval", B=50, seed=0, method="hk", values=[1, 2, 3])
        assert np.isnan(ci.low) and np.isnan(ci.high) and ci.n_valid == 0


def test_hk_perfect_resample_correction_counts_the_pairs_of_units_of_three():
    # Three raters: three units all 3, one unit 3, 4, 4. Each ordered pair within a unit of
    # three weighs 1/2: o_33 = 3 * 3 = 9, o_44 = 1, o_34 = o_43 = 1, n = 12, and there are
    # 3 * 4 = 12 rater pairs (3 per unit). KALPHA zeroes round(B sum_c (o_cc / n)^pairs) of the
    # perfect resamples: round(2000 ((9/12)^12 + (1/12)^12)) = round(63.4) = 63. (Counting
    # m_u / (m_u - 1) / 2 = 3/4 "pairs" per unit would zero all of them, about 224.)
    from analysis.alpha import _hk_boot
    from analysis.layout import counts_matrix

    vals = np.array([1.0, 2, 3, 4, 5])
    m = np.array([[3, 3, 3]] * 3 + [[3, 4, 4]], float)
    b = _hk_boot(counts_matrix(m, vals), 3, "interval", vals, 2000, 1)
    assert np.sum(b == 0.0) == round(2000 * ((9 / 12) ** 12 + (1 / 12) ** 12)) == 63
    # the draws that hit only the diagonal (P = (10/12)^12 = 11%) and were not zeroed stay 1
    assert np.sum(b == 1.0) == pytest.approx(2000 * (10 / 12) ** 12 - 63, abs=60)


def test_hk_draws_25_per_non_empty_cell_when_that_is_fewer():
    # 120 units of two raters on a 3/4 scale: 100 say 3 and 3, 10 say 4 and 4, 10 say 3 and 4.
    # o_33 = 200, o_44 = 20, o_34 = o_43 = 10: Q = 4 non-empty cells, n = 240, so
    # M = min(25 * 4, (2 - 1) * 240 / 2) = min(100, 120) = 100 draws per resample. With
    # interval distances (4 - 3)^2 = 1, alpha_b = 1 - S / (M D_e), S the number of 3-4 draws,
    # D_e = 2 * 210 * 30 / (240 * 239): every (1 - alpha_b) M D_e is a whole number, and its
    # mean is M * P(3-4 cell) = 100 * 20 / 240 = 8.33.
    from analysis.alpha import _hk_boot
    from analysis.layout import counts_matrix

    vals = np.array([3.0, 4.0])
    m = np.array([[3, 3]] * 100 + [[4, 4]] * 10 + [[3, 4]] * 10, float)
    b = _hk_boot(counts_matrix(m, vals), 2, "interval", vals, 2000, 7)
    d_e = 2 * 210 * 30 / (240 * 239)
    s = (1 - b) * 100 * d_e
    assert np.allclose(s, np.round(s), atol=1e-9)
    assert s.mean() == pytest.approx(100 * 20 / 240, abs=0.3)  # SE 2.8 / sqrt(2000) = 0.06


def test_unit_bootstrap_with_a_last_partial_chunk_and_the_unit_types():
    from analysis.alpha import _unit_types

    # B = 300 is one chunk of 250 resamples and one of 50: every resample counted once
    r = _study(n_items=30, seed=8)
    ci = alpha_bootstrap(r, "ordinal", B=300, seed=4)
    assert ci.n_valid == 300 and ci.low < ci.estimate < ci.high
    # distinct count vectors and their multiplicity; no unit at all; one unit, one value
    types, freq = _unit_types(np.array([[2.0, 0], [1, 1], [2, 0], [2, 0]]))
    assert sorted(zip(map(tuple, types), freq, strict=True)) == [((1.0, 1.0), 1), ((2.0, 0.0), 3)]
    types, freq = _unit_types(np.zeros((0, 5)))
    assert types.shape == (0, 5) and freq.shape == (0,)
    types, freq = _unit_types(np.array([[2.0]]))
    assert types.tolist() == [[2.0]] and freq.tolist() == [1]


@pytest.mark.parametrize("n_values", [60, 70])
def test_unit_types_are_exact_for_wide_scales(n_values):
    # The unit types are found through one integer key per count vector when base^columns
    # stays below 2^62 (60 values, counts 0/1: 2^60), else by numpy's row-wise unique (70
    # values: 2^70). Vectors that differ only in the first value, beside a count in the last,
    # must stay apart: a key of 2^59 + 1 in float64, or 2^69 + 1 in int64, would merge them.
    from collections import Counter

    from analysis.alpha import _unit_types

    rows = np.zeros((5, n_values))
    rows[[0, 1, 2], -1] = 1
    rows[[1, 3], 0] = 1
    rows[4, 1] = 1
    counts = rows[[0, 1, 1, 2, 3, 4, 4, 4]]
    types, freq = _unit_types(counts)
    want = Counter(map(tuple, counts))
    assert dict(zip(map(tuple, types), freq.tolist(), strict=True)) == dict(want)
    assert len(want) == 4 and freq.sum() == 8


def test_defaults_edges_and_refusals():
    r = _study(n_items=40, seed=9)
    # the documented defaults: B = 1000, seed 0, 95%, Krippendorff's 0.667 as the minimum
    d = alpha_bootstrap(r)
    assert (d.B, d.seed, d.level, d.alpha_min, d.method) == (1000, 0, 0.95, 0.667, "unit")
    assert d == alpha_bootstrap(r, "ordinal", B=1000, seed=0, ci=0.95, alpha_min=0.667)
    assert d.q_below_min == alpha_bootstrap(r, alpha_min=0.667).q_below_min < 1.0
    # a single resample is allowed (its interval is that resample's alpha)
    one = alpha_bootstrap(r, B=1, seed=3)
    assert one.n_valid == 1 and one.low == one.high
    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="ci must be between 0 and 1"):
            alpha_bootstrap(r, ci=bad)
    # no rating at all: no estimate, no interval, no resample counted (both methods)
    empty = Ratings(np.full((3, 2), np.nan), (0, 1, 2), ("a", "b"))
    for method in ("unit", "hk"):
        e = alpha_bootstrap(empty, B=20, method=method)
        assert np.isnan(e.estimate) and np.isnan(e.low) and np.isnan(e.high)
        assert e.n_valid == 0 and np.isnan(e.q_below_min)
        assert (e.method, e.level, e.B, e.seed, e.alpha_min) == (method, 0.95, 20, 0, 0.667)


def test_resamples_without_variance_do_not_count():
    # Two items, [1, 1] and [2, 2]: alpha = 1. A resample that draws one item twice has no
    # variance (alpha undefined) and is left out; the others have alpha exactly 1.
    r = Ratings(np.array([[1.0, 1], [2, 2]]), (0, 1), ("a", "b"))
    ci = alpha_bootstrap(r, "interval", B=200, seed=0, alpha_min=1.0)
    assert ci.estimate == 1.0 and (ci.low, ci.high) == (1.0, 1.0)
    assert 60 < ci.n_valid < 140  # about half (binomial(200, 1/2))
    assert ci.q_below_min == 0.0  # "below" the minimum is strictly below: 1.0 is not
    # the single resample of seed 0 draws one item twice: an estimate, no interval
    one = alpha_bootstrap(r, "interval", B=1, seed=0)
    assert one.estimate == 1.0 and one.n_valid == 0 and np.isnan(one.low)

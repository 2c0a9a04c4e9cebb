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

"""The active-labelling planner (analysis/active.py) on hand-built studies whose residuals are
known exactly: the spread → residual fit, probabilities in proportion to the estimated
residual SD with the floor, the split across models, and the frame path against the array
path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.active import FLOOR, fit_spread, plan_arrays, plan_draw
from analysis.ppi import allocate_budget
from analysis.scales import Scale

M, RATED = 200, 40  # per model; half the items with spread 0, half with spread 0.8


def _study(k_models: int = 2, sd0: float = 0.2, sd1: float = 1.0, spread1: float = 0.8):
    """Per model: judge values 2, 2, 4, 4, ...; residuals +s, -s, +s, -s (so lambda = 1 and
    the offset 0 exactly); items 0-99 have spread 0 and residual SD sd0, items 100-199
    spread ``spread1`` and SD sd1; the first 20 of each half are rated."""
    yh = np.tile([2.0, 2.0, 4.0, 4.0], M // 4)
    sign = np.tile([1.0, -1.0], M // 2)
    sd = np.where(np.arange(M) < M // 2, sd0, sd1)
    spread = np.where(np.arange(M) < M // 2, 0.0, spread1)
    rated = (np.arange(M) % (M // 2)) < RATED // 2
    y = np.where(rated, yh + sign * sd, np.nan)
    model = np.repeat(np.arange(k_models), M)
    return (model, np.tile(rated, k_models), np.tile(y, k_models), np.tile(yh, k_models),
            np.tile(spread, k_models))


def _frames(k_models=2):
    """The study as the frames `plan_draw` reads: items (a000…, b000…; models alpha, beta),
    the human ratings of the rated items and the judge's values with their spreads."""
    model, rated, y, yh, spread = _study(k_models=k_models)
    ids = [f"{'ab'[m]}{i:03d}" for m, i in zip(model, np.tile(np.arange(M), k_models),
                                                strict=True)]
    items = pd.DataFrame({"item_id": ids, "model": np.array(["alpha", "beta"])[model]})
    human = pd.DataFrame({"item_id": np.array(ids)[rated], "dimension": "empathy",
                          "value": y[rated]})
    judge = pd.DataFrame({"item_id": ids, "dimension": "empathy", "value": yh,
                          "spread": spread})
    return items, human, judge, (model, rated, y, yh, spread)


ORDINAL = Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))


def test_probabilities_follow_the_estimated_residual_sd_given_the_spread_with_a_floor():
    model, rated, y, yh, spread = _study()
    plan = plan_arrays(model, rated, y, yh, spread, budget=40, rng=np.random.default_rng(0))
    # squared residuals times n / (n - 2) for lambda and the offset: n = 40 per model
    c = np.sqrt(40 / 38)
    assert plan.fit.spread == (0.0, 0.8)
    assert plan.fit.sd == pytest.approx((0.2 * c, 1.0 * c), rel=1e-12)
    assert plan.fit.n == 80 and plan.model_factor == pytest.approx([1.0, 1.0])
    assert plan.allocation.tolist() == [20, 20]
    # weights (1 - eps) sigma / mean(sigma over the unrated) + eps, eps = 0.2:
    # 0.8 * 0.2 / 0.6 + 0.2 = 0.46667 and 0.8 * 1.0 / 0.6 + 0.2 = 1.53333 (mean 1 over the
    # 160 unrated), times 20 / 160
    p = plan.probability[:M]
    un = ~rated[:M]
    assert p[un & (spread[:M] == 0)] == pytest.approx(20 / 160 * (0.8 * 0.2 / 0.6 + 0.2))
    assert p[un & (spread[:M] > 0)] == pytest.approx(20 / 160 * (0.8 * 1.0 / 0.6 + 0.2))
    assert p[un].sum() == pytest.approx(20)
    # the rated items carry the probability they would have had
    assert p[rated[:M] & (spread[:M] > 0)] == pytest.approx(20 / 160 * (0.8 / 0.6 + 0.2))
    assert plan.picked.sum() == 40 and not (plan.picked & rated).any()


def test_the_floor_bounds_every_weight_even_where_the_judge_is_never_wrong():
    model, rated, y, yh, spread = _study(sd0=0.0)
    plan = plan_arrays(model, rated, y, yh, spread, budget=40, rng=np.random.default_rng(0))
    assert plan.fit.sd[0] == 0.0
    un = ~rated
    floor = FLOOR * 20 / 160  # a fifth of uniform's 20 / 160
    assert plan.probability[un & (spread == 0)] == pytest.approx(floor)
    assert (1 / plan.probability[un]).max() == pytest.approx(1 / floor)  # 5 x uniform's 8


def test_a_spread_that_says_nothing_gives_a_uniform_draw_within_the_model():
    model, rated, y, yh, spread = _study(sd0=0.6, sd1=0.6)
    plan = plan_arrays(model, rated, y, yh, spread, budget=40, rng=np.random.default_rng(1))
    assert plan.probability[~rated] == pytest.approx(20 / 160)


def test_models_share_the_budget_by_the_sum_of_their_standard_errors():
    # model 1's residuals are three times model 0's at every spread: its factor says so, and
    # it gets the allocation that minimises the sum of the two standard errors
    model, rated, y, yh, spread = _study()
    y = np.where(model == 1, yh + 3 * (y - yh), y)
    plan = plan_arrays(model, rated, y, yh, spread, budget=60, rng=np.random.default_rng(0))
    assert plan.model_factor[1] / plan.model_factor[0] == pytest.approx(3.0)
    sig = plan.sigma
    q, s2 = [], []
    for k in (0, 1):
        s, un = sig[model == k], ~rated[model == k]
        w = 0.8 * s / s[un].mean() + 0.2
        q.append(np.mean(s ** 2))
        s2.append((un.sum() / M) ** 2 * np.mean(s[un] ** 2 / w[un]))
    jv = [4.0 / M, 4.0 / M]  # lambda^2 Var(judge) = 1 * Var(2, 2, 4, 4, ...) = 1, per item
    want = allocate_budget([40, 40], q, s2, [v / 4 for v in jv], [160, 160], 60)
    assert plan.allocation.tolist() == want.tolist()
    assert plan.allocation[1] > plan.allocation[0]


def test_the_frames_path_is_the_array_path():
    items, human, judge, (model, rated, y, yh, spread) = _frames(k_models=2)
    ids = items["item_id"].tolist()
    judge = judge.assign(agree=spread == 0)  # a column the plan does not read
    plan = plan_draw(items, human, judge, {"empathy": ORDINAL}, budget=40, seed=5)
    core = plan_arrays(model, rated, y, yh, spread, budget=40, rng=np.random.default_rng(5))
    assert plan.probability == dict(zip(ids, core.probability.tolist(), strict=True))
    assert plan.picked == tuple(sorted(np.array(ids)[core.picked]))
    assert plan.allocation == {"alpha": 20, "beta": 20}
    assert plan.rated_before == {"alpha": 0.2, "beta": 0.2}
    # how many more for +-0.1: one row per model, from the rated items
    assert [(n["model"], n["rated"]) for n in plan.needed] == [("alpha", 40), ("beta", 40)]


def test_fit_spread_is_non_decreasing_and_says_what_unscored_items_get():
    # a dip in the middle block is pooled with its neighbour (pool adjacent violators)
    u = np.repeat([0.0, 0.5, 1.0], 10)
    r2 = np.repeat([0.04, 0.5, 0.3], 10)
    f = fit_spread(u, r2, np.full(12, 0.81))
    assert f.sd == pytest.approx((0.2, 0.4 ** 0.5, 0.4 ** 0.5))
    assert f.unscored_sd == pytest.approx(0.9)  # 12 rated unscored pairs: their own
    assert f(np.array([np.nan, 0.0, 0.25]))[[0, 1]] == pytest.approx([0.81, 0.04])
    assert f(np.array([0.25]))[0] == pytest.approx((0.04 + 0.4) / 2)  # between the blocks
    assert fit_spread(u, r2, np.full(3, 9.0)).unscored_sd == pytest.approx(0.4 ** 0.5)
    with pytest.raises(ValueError, match="too few"):
        fit_spread(np.array([0.0]), np.array([1.0]), np.array([]))

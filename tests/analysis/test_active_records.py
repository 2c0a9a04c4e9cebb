"""The active-labelling planner's edges and its record, by hand: the spread fit's blocks and
weights, the inputs it refuses, probabilities when the budget caps items or covers every
unrated item, the notes, and every field of `plan_draw`'s plan (the ± halfwidth rows from
the rated items' own moments)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import analysis.active as active
from analysis.active import fit_spread, needed_for_halfwidth, plan_arrays, plan_draw
from analysis.ppi import allocate_budget, labelled_for_halfwidth
from analysis.scales import Scale
from tests.analysis.test_active import ORDINAL, M, _frames, _study

# --- the spread → residual fit ----------------------------------------------------------------

def test_blocks_keep_equal_spreads_together_and_fold_a_short_tail_in():
    # nine spreads of 0, two of 1, ten of 2, blocks of at least 10: the first block runs on
    # past the tenth pair to keep both 1s (11 pairs), the second has the ten 2s
    u = np.r_[np.zeros(9), np.ones(2), np.full(10, 2.0)]
    r2 = np.r_[np.full(9, 0.01), np.full(2, 0.04), np.ones(10)]
    f = fit_spread(u, r2, np.array([]))
    assert f.spread == pytest.approx((2 / 11, 2.0))
    assert f.sd == pytest.approx((math.sqrt(0.17 / 11), 1.0))
    # 25 distinct spreads: 10, then 15 (the last 5 are too few for a block of their own)
    f = fit_spread(np.arange(25.0), np.arange(25.0), np.array([]))
    assert f.spread == pytest.approx((4.5, 17.0))


def test_violating_blocks_are_pooled_by_their_sizes():
    # block means 1.0 (10 pairs) then 0.4 (20 pairs) fall: pooled, weighted by size,
    # (10 · 1.0 + 20 · 0.4) / 30 = 0.6 (unweighted it would be 0.7)
    f = fit_spread(np.r_[np.zeros(10), np.ones(20)], np.r_[np.ones(10), np.full(20, 0.4)],
                   np.array([]))
    assert f.sd == pytest.approx((math.sqrt(0.6), math.sqrt(0.6)))


def test_two_pairs_are_enough_and_ten_unscored_pairs_have_their_own_sd():
    f = fit_spread(np.array([0.0, 1.0]), np.array([1.0, 4.0]), np.full(10, 0.81))
    assert f.spread == (0.5,) and f.sd == pytest.approx((math.sqrt(2.5),))
    assert f.unscored_sd == pytest.approx(0.9) and f.n == 2


# --- plan_arrays ------------------------------------------------------------------------------

def test_a_budget_of_one_picks_one_item():
    model, rated, y, yh, spread = _study(k_models=2)
    plan = plan_arrays(model, rated, y, yh, spread, budget=1, rng=np.random.default_rng(0))
    assert plan.picked.sum() == 1 and plan.allocation.sum() == 1
    assert plan.notes == ()
    with pytest.raises(ValueError, match="budget must be 1 or more"):
        plan_arrays(model, rated, y, yh, spread, budget=0, rng=np.random.default_rng(0))


def test_the_floor_is_a_share_in_zero_to_one():
    model, rated, y, yh, spread = _study(k_models=1)
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="floor must be in"):
            plan_arrays(model, rated, y, yh, spread, budget=10, rng=np.random.default_rng(0),
                        floor=bad)
    # a floor of 1 is the uniform draw: 10 of the 160 unrated items each
    plan = plan_arrays(model, rated, y, yh, spread, budget=10, rng=np.random.default_rng(0),
                       floor=1.0)
    assert plan.probability[~rated] == pytest.approx(10 / 160)


def test_no_items_at_all_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="no model has three or more"):
        plan_arrays(np.array([], int), np.array([], bool), np.array([]), np.array([]),
                    np.array([]), budget=1, rng=np.random.default_rng(0))


def test_a_judge_without_a_score_is_named_as_the_reason():
    """A judge whose judgments are all unscored, on a study with many ratings: the refusal
    said to rate a first uniform round (a user trial); the ratings are not what is missing."""
    model, rated, y, yh, spread = _study(k_models=2)
    with pytest.raises(ValueError, match=r"^the judge scored no item here \(its judgments"):
        plan_arrays(model, rated, y, np.full_like(yh, np.nan), spread, budget=5,
                    rng=np.random.default_rng(0))
    few = np.full_like(y, np.nan)  # no ratings either: the ratings are named first
    with pytest.raises(ValueError, match="no model has three or more"):
        plan_arrays(model, rated, few, np.full_like(yh, np.nan), spread, budget=5,
                    rng=np.random.default_rng(0))


def test_a_model_with_few_ratings_is_named_in_a_note():
    model, rated, y, yh, spread = _study(k_models=2)
    few = (model == 1) & rated & (np.arange(2 * M) % 100 >= 4)  # model 1 keeps 8 ratings
    rated = rated & ~few
    y = np.where(few, np.nan, y)
    plan = plan_arrays(model, rated, y, yh, spread, budget=10, rng=np.random.default_rng(0),
                       names=["alpha", "beta"])
    assert plan.notes == ("beta: fewer than 10 rated items; its residual spread is taken "
                          "from all models together",)


def test_a_fully_rated_model_gets_nothing_and_the_next_is_still_planned():
    model, rated, y, yh, spread = _study(k_models=2)
    rated = rated | (model == 0)
    y = np.where(model == 0, yh + 0.1, y)
    plan = plan_arrays(model, rated, y, yh, spread, budget=20, rng=np.random.default_rng(0))
    assert plan.allocation.tolist() == [0, 20] and plan.picked[model == 1].sum() == 20
    assert (plan.probability[model == 1][~rated[model == 1]] > 0).all()


def test_a_judge_that_is_never_wrong_gives_a_uniform_draw():
    # every residual 0: no item is expected to be better than another
    model, rated, y, yh, spread = _study(k_models=1, sd0=0.0, sd1=0.0)
    plan = plan_arrays(model, rated, y, yh, spread, budget=16, rng=np.random.default_rng(0))
    assert plan.probability[~rated] == pytest.approx(16 / 160)
    assert (plan.sigma == 0).all() and plan.model_factor.tolist() == [1.0]


def test_more_budget_than_unrated_items_takes_them_all_and_says_so():
    model, rated, y, yh, spread = _study(k_models=1)
    plan = plan_arrays(model, rated, y, yh, spread, budget=500, rng=np.random.default_rng(0))
    assert plan.picked.sum() == 160 and (plan.probability[~rated] == 1.0).all()
    assert plan.notes == ("only 160 unrated items are left; the budget was 500",)
    # the rated items: the weight they would have had, (1 - 0.2) σ / mean σ + 0.2 with σ
    # 0.2 and 1.0 (times √(40/38), which cancels) and mean σ over the unrated 0.6, capped at 1
    p = plan.probability[rated]
    low = rated & (spread == 0)
    assert p[low[rated]] == pytest.approx(0.8 * 0.2 / 0.6 + 0.2)
    assert (p[~low[rated]] == 1.0).all()


def test_items_capped_at_one_leave_the_rest_to_share_the_budget():
    # 130 of 160 unrated: weights 0.46667 (80 items, spread 0) and 1.53333 (80, spread 0.8);
    # 130 · 1.53333 / 160 > 1, so those 80 are certain and the other 50 picks are shared by
    # the 80 low-weight items: 0.625 each. A rated item's probability uses the same scale,
    # 50 / (80 · 0.46667): 0.625 for a low-weight one, capped at 1 for the others
    model, rated, y, yh, spread = _study(k_models=1)
    plan = plan_arrays(model, rated, y, yh, spread, budget=130, rng=np.random.default_rng(0))
    p = plan.probability
    assert p[~rated & (spread > 0)] == pytest.approx(1.0)
    assert p[~rated & (spread == 0)] == pytest.approx(0.625)
    assert p[rated & (spread == 0)] == pytest.approx(0.625)
    assert p[rated & (spread > 0)] == pytest.approx(1.0)


# --- needed_for_halfwidth and plan_draw's record ----------------------------------------------

def _moments_needed(y, yh, halfwidth, level=0.95):
    """The reference: the sample variance of every rated value, the sample variance of every
    judge value, their sample covariance on the items with both (ddof 1 throughout)."""
    has = ~np.isnan(y)
    both = has & ~np.isnan(yh)
    vy = np.var(y[has], ddof=1)
    vh = np.var(yh[~np.isnan(yh)], ddof=1)
    yb, hb = y[both], yh[both]
    cov = np.sum((yb - yb.mean()) * (hb - hb.mean())) / (both.sum() - 1)
    return labelled_for_halfwidth(vy, vh, cov, y.size, halfwidth, level=level)


def test_needed_for_halfwidth_takes_the_moments_of_the_rated_items():
    rng = np.random.default_rng(3)
    yh = rng.normal(3, 1, 400)
    y = np.where(np.arange(400) < 30, 0.5 * yh + rng.normal(0, 1.0, 400), np.nan)
    yh[5] = np.nan      # rated, not scored: in Var(Y), not in the covariance
    yh[200] = np.nan    # neither
    want = _moments_needed(y, yh, 0.15)
    assert needed_for_halfwidth(y, yh, 0.15) == want and 30 < want < 400
    assert needed_for_halfwidth(y, yh, 0.15, level=0.8) == _moments_needed(y, yh, 0.15, 0.8)
    assert needed_for_halfwidth(y, yh, 0.15, level=0.8) < want
    # a small model, where the degrees of freedom of the judge's variance show: every ± h
    small_y, small_h = y[:36].copy(), yh[:36].copy()
    for h in np.linspace(0.3, 1.2, 46):
        assert needed_for_halfwidth(small_y, small_h, h) == _moments_needed(small_y, small_h, h)
    # two rated and scored items are enough to say; one is not
    two = np.where(np.arange(400) < 2, y, np.nan)
    assert needed_for_halfwidth(two, yh, 0.5) == _moments_needed(two, yh, 0.5)
    assert needed_for_halfwidth(np.where(np.arange(400) < 1, y, np.nan), yh, 0.5) is None


def test_plan_draw_keeps_every_field_and_the_rows_of_the_needed_ratings():
    items, human, judge, (_, rated, y, yh, _) = _frames()
    # beta loses all but 8 of its ratings; a second dimension "warmth" (listed first) has
    # exactly two ratings for alpha; a binary and a nominal dimension are left out
    drop = human["item_id"].str.startswith("b") & (human.index % 5 != 0)
    human = human[~drop]
    warm = pd.DataFrame({"item_id": ["a000", "a001"], "dimension": "warmth",
                         "value": [3.0, 4.0]})
    wj = judge.assign(dimension="warmth")
    # the binary and the nominal dimension have ratings and scores too, all ignored
    other = [human.assign(dimension=d, value=v) for d, v in (("safe", 1.0), ("topic", 2.0))]
    other_j = [judge.assign(dimension=d, value=v) for d, v in (("safe", 0.0), ("topic", 1.0))]
    scales = {"warmth": ORDINAL, "empathy": ORDINAL,
              "safe": Scale("ordinal", (0.0, 1.0), binary=True),
              "topic": Scale("nominal", (1.0, 2.0))}
    plan = plan_draw(items, pd.concat([human, warm, *other]), pd.concat([judge, wj, *other_j]),
                     scales,
                     budget=30, seed=4, halfwidth=0.1, level=0.9)
    assert (plan.budget, plan.seed, plan.halfwidth) == (30, 4, 0.1)
    assert plan.rated_before == {"alpha": 0.2, "beta": 8 / 200}
    assert plan.notes == ("beta: fewer than 10 rated items; its residual spread is taken "
                          "from all models together",)
    assert plan.fit.n > 0 and len(plan.fit.sd) >= 1
    ya = np.full(M, np.nan)
    ya[:2] = [3.0, 4.0]
    a_emp = np.where(rated[:M], y[:M], np.nan)
    b_emp = np.where(np.isin(items["item_id"][M:], human["item_id"]), y[M:], np.nan)
    rows = [("alpha", "warmth", ya, yh[:M]), ("alpha", "empathy", a_emp, yh[:M]),
            ("beta", "empathy", b_emp, yh[M:])]
    want = []
    for m, d, yy, hh in rows:
        need = _moments_needed(yy, hh, 0.1, 0.9)
        have = int((~np.isnan(yy)).sum())
        want.append({"model": m, "dimension": d, "rated": have, "needed": need,
                     "more": None if need is None else max(0, need - have)})
    assert list(plan.needed) == want
    # warmth's two ratings say a number; ± 0.1 on empathy is out of reach even with every item
    assert want[0]["rated"] == 2 and want[0]["more"] > 0 and want[1]["needed"] is None


def test_plan_draw_defaults_and_refusals():
    items, human, judge, _ = _frames(k_models=1)
    plan = plan_draw(items, human, judge, {"empathy": ORDINAL}, budget=1)
    assert (plan.seed, plan.halfwidth, plan.budget, len(plan.picked)) == (0, 0.1, 1, 1)
    assert plan == plan_draw(items, human, judge, {"empathy": ORDINAL}, budget=1, seed=0,
                             halfwidth=0.1)
    with pytest.raises(ValueError, match="budget must be 1 or more"):
        plan_draw(items, human, judge, {"empathy": ORDINAL}, budget=0)
    with pytest.raises(ValueError, match="no model has three or more"):
        plan_draw(items, human.iloc[:0], judge, {"empathy": ORDINAL}, budget=5)


# --- the residuals a cell (model × dimension) gives the fit ------------------------------------

X = np.tile([1.0, 2.0, 3.0, 4.0], 5)  # 20 rated judge values: mean 2.5, variance 1.25


def _fit_sd(y_rated, x=X, lone=None):
    """One model: 20 rated and scored items (judge ``x``, humans ``y_rated``, spread 0),
    ``lone`` rated items the judge did not score, 40 unrated items; the fitted SD."""
    n_lone = 0 if lone is None else len(lone)
    y = np.r_[y_rated, [] if lone is None else lone, np.full(40, np.nan)]
    yh = np.r_[x, np.full(n_lone, np.nan), np.tile([1.0, 2.0, 3.0, 4.0], 10)]
    spread = np.where(np.isnan(yh), np.nan, 0.0)
    plan = plan_arrays(np.zeros(y.size, int), ~np.isnan(y), y, yh, spread, budget=5,
                       rng=np.random.default_rng(0))
    return plan.fit


def test_lambda_is_clipped_to_zero_and_one_and_the_residuals_scaled_by_n_over_n_minus_2():
    c = 20 / 18  # n / (n - 2): λ and the offset
    # humans twice the judge: λ = 2 clipped to 1, residual y - x = x, variance 1.25
    assert _fit_sd(2 * X).sd == pytest.approx((math.sqrt(1.25 * c),))
    # humans against the judge: λ clipped to 0, residual y itself, variance 1.25
    assert _fit_sd(10 - X).sd == pytest.approx((math.sqrt(1.25 * c),))
    # half the judge plus e = (1, -1, -1, 1), which has covariance 0 with x: λ = 0.5, r = e
    e = np.tile([1.0, -1.0, -1.0, 1.0], 5)
    assert _fit_sd(0.5 * X + e).sd == pytest.approx((math.sqrt(c),))
    # a constant judge: λ = 0, residual y, variance 1.25
    assert _fit_sd(X, x=np.full(20, 3.0)).sd == pytest.approx((math.sqrt(1.25 * c),))


def test_rated_items_the_judge_did_not_score_have_their_own_residual_sd():
    # twelve of them, 1, 3, 1, 3, ...: (t - mean)² = 1 times 12 / 11 (their mean)
    f = _fit_sd(X + np.tile([0.5, -0.5], 10), lone=np.tile([1.0, 3.0], 6))
    assert f.unscored_sd == pytest.approx(math.sqrt(12 / 11))


def test_two_unscored_or_three_scored_ratings_in_a_cell_count():
    # five models, each with 3 rated and scored items (λ and the offset leave one degree of
    # freedom) and 2 rated but unscored ones, 1 and 3: (±1)² · 2 / 1 = 2 each, ten in all
    K = 5
    y = np.tile(np.r_[[1.0, 2.0, 4.0], [1.0, 3.0], np.full(10, np.nan)], K)
    yh = np.tile(np.r_[[1.0, 2.0, 3.0], [np.nan, np.nan], np.tile([1.0, 3.0], 5)], K)
    spread = np.where(np.isnan(yh), np.nan, 0.0)
    plan = plan_arrays(np.repeat(np.arange(K), 15), ~np.isnan(y), y, yh, spread, budget=5,
                       rng=np.random.default_rng(0))
    assert plan.fit.n == 15
    assert plan.fit.unscored_sd == pytest.approx(math.sqrt(2.0))


# --- the judge's share of each model's SE, as the allocation receives it ----------------------

PAT = np.tile([2.0, 2.0, 4.0, 4.0], M // 4)   # variance 1 over all 200 items
E = np.tile([1.0, -1.0, -1.0, 1.0], M // 4)   # covariance 0 with PAT on any 4k items


def test_the_judge_s_share_of_each_model_reaches_the_allocation(monkeypatch):
    # per cell λ² Var(judge over its scored items), averaged over the dimensions, over M.
    # Humans 0.5 · judge + e on the 40 rated items: λ = 0.5.
    #   model 0: judge PAT (var 1) and 2 · PAT (var 4): (0.25 · 1 + 0.25 · 4) / 2 = 0.625
    #   model 1: PAT, and a dimension with only 2 rated items (no λ: 0): 0.25 / 2 = 0.125
    #   model 2: a judge constant (3) on the rated items, PAT elsewhere (λ = 0: 0), and PAT
    rated = np.arange(M) < 40
    cells = {0: [(PAT, rated), (2 * PAT, rated)],
             1: [(PAT, rated), (PAT, np.arange(M) < 2)],
             2: [(np.where(rated, 3.0, PAT), rated), (PAT, rated)]}
    yh = np.vstack([np.column_stack([x for x, _ in cells[k]]) for k in range(3)])
    y = np.vstack([np.column_stack([np.where(r, 0.5 * x + E, np.nan) for x, r in cells[k]])
                   for k in range(3)])
    seen = {}

    def spy(n0, q, s2, jv, caps, budget):
        seen["jv"] = np.asarray(jv)
        return allocate_budget(n0, q, s2, jv, caps, budget)

    monkeypatch.setattr(active, "allocate_budget", spy)
    plan_arrays(np.repeat(np.arange(3), M), ~np.isnan(y).all(axis=1), y, yh,
                np.zeros_like(yh), budget=30, rng=np.random.default_rng(0))
    assert seen["jv"] * M == pytest.approx([0.625, 0.125, 0.125])


def test_a_model_s_factor_needs_ten_ratings_and_tiny_residuals_count():
    # model 1's residuals are three times model 0's, all tiny (SD 0.02 and 0.06, a sum of
    # squares far below 1): the factor still says 3. Model 2 has exactly 10 rated items:
    # enough for a factor of its own, so no note.
    model, rated, y, yh, spread = _study(k_models=3, sd0=0.02, sd1=0.02)
    y = np.where(model == 1, yh + 3 * (y - yh), y)
    ten = (model == 2) & rated & (np.arange(3 * M) % 100 < 5)  # keep 5 + 5 of model 2's
    rated = rated & ~((model == 2) & ~ten)
    y = np.where((model == 2) & ~ten, np.nan, y)
    plan = plan_arrays(model, rated, y, yh, spread, budget=30, rng=np.random.default_rng(0))
    assert rated[model == 2].sum() == 10 and plan.notes == ()
    assert plan.model_factor[1] / plan.model_factor[0] == pytest.approx(3.0)


def test_a_model_with_one_unrated_item_can_still_have_it_picked():
    model, rated, y, yh, spread = _study(k_models=2)
    last = (model == 0) & (np.arange(2 * M) % M == M - 1)
    rated = rated | ((model == 0) & ~last)
    y = np.where((model == 0) & ~last & np.isnan(y), yh + 0.1 * E[np.arange(2 * M) % M], y)
    plan = plan_arrays(model, rated, y, yh, spread, budget=161, rng=np.random.default_rng(0))
    assert plan.allocation.tolist() == [1, 160]
    assert plan.picked[last].all() and plan.probability[last] == pytest.approx([1.0])


def test_a_spread_without_a_judge_value_is_not_used():
    items, human, judge, _ = _frames(k_models=1)
    unscored = judge["item_id"] == "a150"
    a = plan_draw(items, human, judge.assign(value=judge["value"].where(~unscored),
                                             spread=judge["spread"].where(~unscored)),
                  {"empathy": ORDINAL}, budget=10)
    b = plan_draw(items, human, judge.assign(value=judge["value"].where(~unscored)),
                  {"empathy": ORDINAL}, budget=10)
    assert a == b


def test_enough_ratings_already_need_no_more():
    # ± 1 on empathy: the 40 rated items are more than enough
    items, human, judge, _ = _frames(k_models=1)
    plan = plan_draw(items, human, judge, {"empathy": ORDINAL}, budget=1, halfwidth=1.0)
    (row,) = plan.needed
    assert row["rated"] == 40 and row["needed"] < 40 and row["more"] == 0

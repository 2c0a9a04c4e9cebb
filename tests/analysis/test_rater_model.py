"""The many-facet Rasch model: recovery of known severities, R's eRm as reference, fair scores,
misfit flags and the cases where nothing is estimable."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.rater_model import EXTREME_ADJUSTMENT, fit_rater_model

REF = Path(__file__).with_name("reference")
TAU = np.array([-1.5, -0.5, 0.5, 1.5])


def simulate(seed: int, n_items: int = 150, severities=np.linspace(-1, 1, 6),
             per_item: int | None = None, noisy_rater: int | None = None) -> pd.DataFrame:
    """Ratings 1..5 from the model itself: θ ~ N(0, 1.5²), thresholds TAU; ``noisy_rater``
    answers uniformly at random instead."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.5, n_items)
    cum = np.concatenate([[0.0], np.cumsum(TAU)])
    rows = []
    for n in range(n_items):
        who = (range(len(severities)) if per_item is None
               else rng.choice(len(severities), per_item, replace=False))
        for j in who:
            if j == noisy_rater:
                rows.append((f"i{n}", f"r{j}", int(rng.integers(1, 6))))
                continue
            lg = (theta[n] - severities[j]) * np.arange(5) - cum
            p = np.exp(lg - lg.max())
            rows.append((f"i{n}", f"r{j}", 1 + int(rng.choice(5, p=p / p.sum()))))
    return pd.DataFrame(rows, columns=["item", "rater", "score"])


@pytest.mark.parametrize("seed,per_item", [(11, None), (12, None), (13, 3)])
def test_recovers_known_severities_6_raters_150_items(seed, per_item):
    true = np.array([-1.0, -0.6, -0.2, 0.2, 0.6, 1.0])
    m = fit_rater_model(simulate(seed, severities=true, per_item=per_item), [1, 2, 3, 4, 5])
    est = m.raters.set_index("rater")["severity"].reindex([f"r{j}" for j in range(6)])
    assert np.corrcoef(est, true)[0, 1] >= 0.95
    # the scale is right too: joint ML inflates severities by ~30 % with 6 ratings per item
    # (slope ≈ 1.3), which this bound rejects; CML's slope stays near 1
    slope = np.polyfit(true, est.to_numpy(), 1)[0]
    assert 0.85 <= slope <= 1.15
    assert np.all(np.abs(est - true) < 3.5 * m.raters.set_index("rater")["se"].reindex(est.index))
    assert m.converged
    assert np.allclose(m.thresholds, TAU, atol=0.45)  # threshold SEs are 0.1-0.2


def test_matches_r_erm_rating_scale_model():
    """mfrm_erm.R fits the same data with eRm::RSM (CML); values agree to 1e-3 logits."""
    data = pd.read_csv(REF / "mfrm_sim.csv")
    m = fit_rater_model(data, [1, 2, 3, 4, 5])
    r_raters = pd.read_csv(REF / "mfrm_erm_raters.csv").set_index("rater")
    mine = m.raters.set_index("rater").reindex(r_raters.index)
    assert np.allclose(mine["severity"], r_raters["severity"], atol=1e-3)
    has_se = r_raters["se"].notna()
    assert np.allclose(mine.loc[has_se, "se"], r_raters.loc[has_se, "se"], atol=1e-3)
    r_tau = pd.read_csv(REF / "mfrm_erm_thresholds.csv")["tau"].to_numpy()
    assert np.allclose(m.thresholds, r_tau, atol=1e-3)
    r_items = pd.read_csv(REF / "mfrm_erm_items.csv").dropna().set_index("item")
    mine_items = m.items.set_index("item").reindex(r_items.index)
    assert len(r_items) > 120
    assert np.allclose(mine_items["measure"], r_items["measure"], atol=2e-3)


def test_fair_score_is_expected_rating_of_an_average_rater():
    m = fit_rater_model(simulate(5, per_item=3), [1, 2, 3, 4, 5])
    row = m.items.iloc[0]
    cum = np.concatenate([[0.0], np.cumsum(m.thresholds)])
    lg = row["measure"] * np.arange(5) - cum
    p = np.exp(lg - lg.max())
    p /= p.sum()
    assert row["fair_score"] == pytest.approx(float(p @ np.arange(1, 6)), abs=1e-9)
    cov = float(p @ (np.arange(1, 6) * np.arange(5)) - (p @ np.arange(1, 6)) * (p @ np.arange(5)))
    assert row["fair_se"] == pytest.approx(cov * row["se"], rel=1e-9)


def test_fair_scores_remove_who_happened_to_rate():
    """Two equally good replies: one rated by the two harshest raters, one by the two most
    lenient. Raw means differ by about a point; fair scores do not."""
    base = simulate(21, severities=np.linspace(-1, 1, 6), per_item=None)
    extra = pd.DataFrame({"item": ["hard", "hard", "soft", "soft"],
                          "rater": ["r5", "r4", "r0", "r1"], "score": [2, 3, 4, 4]})
    m = fit_rater_model(pd.concat([base, extra]), [1, 2, 3, 4, 5])
    it = m.items.set_index("item")
    raw_gap = it.loc["soft", "observed_mean"] - it.loc["hard", "observed_mean"]
    fair_gap = it.loc["soft", "fair_score"] - it.loc["hard", "fair_score"]
    assert raw_gap == pytest.approx(1.5)
    assert abs(fair_gap) < 0.5


def test_a_random_rater_is_flagged_as_misfitting():
    m = fit_rater_model(simulate(7, noisy_rater=2), [1, 2, 3, 4, 5])
    flags = m.raters.set_index("rater")["flag"]
    assert flags["r2"] == "misfit (erratic)"
    assert m.raters.set_index("rater").loc["r2", "infit"] > 1.5
    assert (flags.drop("r2") == "").all()


def test_extreme_item_gets_the_adjusted_finite_measure():
    df = simulate(3, per_item=None)
    df = pd.concat([df, pd.DataFrame({"item": ["top"] * 6, "rater": [f"r{j}" for j in range(6)],
                                      "score": [5] * 6})])
    m = fit_rater_model(df, [1, 2, 3, 4, 5])
    row = m.items.set_index("item").loc["top"]
    assert bool(row["extreme"]) and np.isfinite(row["measure"])
    cum = np.concatenate([[0.0], np.cumsum(m.thresholds)])
    sev = m.raters["severity"].to_numpy()
    lg = (row["measure"] - sev)[:, None] * np.arange(5) - cum
    p = np.exp(lg - lg.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    assert float((p @ np.arange(5)).sum()) == pytest.approx(4 * 6 - EXTREME_ADJUSTMENT, abs=1e-6)


def test_not_estimable_says_why():
    one_cat = pd.DataFrame({"item": list("abab"), "rater": list("xxyy"), "score": [3] * 4})
    m = fit_rater_model(one_cat, [1, 2, 3, 4, 5])
    assert not m.estimable and "one category" in m.reason
    one_rater = pd.DataFrame({"item": list("abc"), "rater": ["x"] * 3, "score": [1, 2, 3]})
    m = fit_rater_model(one_rater, [1, 2, 3])
    assert not m.estimable and "two raters" in m.reason
    assert m.as_dict() == {"estimable": False, "reason": m.reason}


# A third of the demo study's items, every rating of them (a user trial): plan quality, 16
# items, 6 raters, 3 ratings an item; no item is extreme for all its raters, yet the
# conditional likelihood has no maximum (it rises to 2 log 2 as the severities move apart).
NO_MAXIMUM = {
    "iti-001-aster": "r1:5 r5:5 r6:5", "iti-002-cedar": "r2:1 r3:2 r4:1",
    "iti-003-aster": "r1:5 r5:5 r6:5", "iti-003-cedar": "r1:2 r2:1 r6:1",
    "iti-004-birch": "r3:4 r4:2 r5:3", "iti-005-cedar": "r1:2 r5:2 r6:2",
    "iti-006-aster-sap": "r3:4 r4:4 r5:5", "iti-006-cedar": "r4:1 r5:1 r6:1",
    "iti-007-aster": "r1:5 r2:5 r3:5", "iti-007-birch": "r2:3 r3:4 r4:3",
    "iti-007-cedar": "r1:1 r2:1 r3:1", "iti-011-aster-sap": "r1:5 r5:5 r6:5",
    "iti-012-aster": "r2:5 r3:5 r4:5", "iti-012-birch": "r3:4 r4:3 r5:4",
    "iti-013-cedar": "r3:2 r4:2", "iti-015-birch": "r2:4 r3:4 r4:3",
}


def test_a_likelihood_without_a_maximum_is_not_estimable_not_a_crash():
    """BFGS ran the severities off to ±10^5 logits and numpy's SVD failed on the information
    there: `h2h quality model` and `leaderboard --human-value fair` ended in a traceback."""
    rows = [(item, f"sim-rater-{cell[1]}", int(cell[3]))
            for item, cells in NO_MAXIMUM.items() for cell in cells.split()]
    df = pd.DataFrame(rows, columns=["item", "rater", "score"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings on the user's terminal either
        m = fit_rater_model(df, [1, 2, 3, 4, 5])
    assert not m.estimable
    assert m.reason.startswith("not estimable: the ratings do not pin the raters' severities")
    # the estimable fits of every other test here (R's eRm, known severities) stay so


def test_unused_categories_and_disconnected_designs_are_noted():
    a = simulate(9, n_items=60, severities=np.array([-0.5, 0.5]))
    b = simulate(10, n_items=5, severities=np.array([0.0, 0.3]))
    b["item"] = "b" + b["item"]
    b["rater"] = b["rater"].map({"r0": "q0", "r1": "q1"})
    m = fit_rater_model(pd.concat([a, b]), [1, 2, 3, 4, 5, 6, 7])
    assert m.estimable
    assert any("never used: 6, 7" in n for n in m.notes)
    assert any("not connected" in n for n in m.notes)
    assert set(m.raters["rater"]) == {"r0", "r1"}


def test_leaderboard_column_adjusted_for_rater_severity():
    """Model A's replies were rated by the harsh raters, model B's by the lenient ones, with
    the same underlying quality: raw means favour B, fair means do not. Adding the column
    leaves the unadjusted numbers and CIs exactly as they were."""
    from analysis.leaderboard import leaderboard
    from analysis.rater_model import fair_scores, fit_dimensions

    rng = np.random.default_rng(4)
    sev = np.array([-1.0, -0.6, 0.6, 1.0])
    cum = np.concatenate([[0.0], np.cumsum(TAU)])
    rows = []
    for n in range(120):
        theta = rng.normal(0, 1)
        # a common anchor set rated by everyone keeps the design connected
        who = range(4) if n < 40 else ([2, 3] if n % 2 else [0, 1])
        for j in who:
            lg = (theta - sev[j]) * np.arange(5) - cum
            p = np.exp(lg - lg.max())
            rows.append((f"i{n}", f"r{j}", "empathy", 1 + int(rng.choice(5, p=p / p.sum()))))
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    items = pd.DataFrame({"item_id": [f"i{n}" for n in range(40, 120)],
                          "model": ["A" if n % 2 else "B" for n in range(40, 120)],
                          "condition": "none", "task": "dialogue", "scenario": "s"})
    fair = fair_scores(fit_dimensions(ratings, {"empathy": ([1, 2, 3, 4, 5], True)}))
    plain = leaderboard(ratings, items, B=200, seed=1).to_dict()
    adj = leaderboard(ratings, items, B=200, seed=1, fair=fair).to_dict()
    cell = {(c["model"], c["task"]): c for c in adj["cells"]}
    assert [{k: c[k] for k in ("mean", "low", "high")} for c in plain["cells"]] == \
        [{k: c[k] for k in ("mean", "low", "high")} for c in adj["cells"]]
    a, b = cell[("A", "all")], cell[("B", "all")]
    assert b["mean"] - a["mean"] > 0.8  # raw: B looks much better
    assert abs(b["fair_mean"] - a["fair_mean"]) < 0.35  # adjusted: about the same
    expect_a = fair.merge(items[items["model"] == "A"], on="item_id")["fair_score"].mean()
    assert a["fair_mean"] == pytest.approx(expect_a) and a["fair_n"] == 40
    assert "fair_mean" in adj["adjusted"] and "adjusted" not in plain


def _by_hand_fit(m, data: pd.DataFrame) -> pd.DataFrame:
    """Each rater's infit and outfit recomputed from the fitted measures (Wright & Masters
    1982, ch. 5; Linacre's FACETS manual, "Fit statistics"): for a rating x with model
    expectation E = Σ k P_k and variance W = Σ k² P_k − E², over the rater's ratings
        infit  = Σ (x − E)² / Σ W·d          (information-weighted)
        outfit = Σ ((x − E)² / W) / Σ d      (unweighted mean of squared z)
    where d = (L − 1)/L for a reply rated L times (its θ was fitted to those L ratings, using
    up a degree of freedom) and d = 0 for an extreme reply (left out of fit, as FACETS does)."""
    it = m.items.set_index("item")
    sev = m.raters.set_index("rater")["severity"]
    cum = np.concatenate([[0.0], np.cumsum(m.thresholds)])
    k = np.arange(len(cum))
    per_item = data.groupby("item")["rater"].transform("size").to_numpy(float)
    rows = []
    for (i, r, x), big_l in zip(data[["item", "rater", "score"]].itertuples(index=False),
                                per_item, strict=True):
        lg = (it.loc[i, "measure"] - sev[r]) * k - cum
        p = np.exp(lg - lg.max())
        p /= p.sum()
        e, w = p @ k, p @ k ** 2 - (p @ k) ** 2
        d = 0.0 if it.loc[i, "extreme"] else (big_l - 1) / big_l
        rows.append((r, (x - 1 - e) ** 2, w, d))
    df = pd.DataFrame(rows, columns=["rater", "r2", "w", "d"])
    df["r2"] = np.where(df["d"] > 0, df["r2"], 0.0)
    g = df.assign(wd=df["w"] * df["d"], z2=df["r2"] / df["w"]).groupby("rater")
    return pd.DataFrame({"infit": g["r2"].sum() / g["wd"].sum(),
                         "outfit": g["z2"].sum() / g["d"].sum()})


def test_infit_and_outfit_equal_the_formula_by_hand():
    """Three ratings per reply, so d = 2/3 matters: a df correction of 1 would shrink both mean
    squares by a third, and an unweighted infit would equal the outfit."""
    data = simulate(31, n_items=60, per_item=3)
    m = fit_rater_model(data, [1, 2, 3, 4, 5])
    mine = m.raters.set_index("rater")[["infit", "outfit"]].sort_index()
    hand = _by_hand_fit(m, data).sort_index()
    assert np.allclose(mine.to_numpy(), hand.to_numpy(), rtol=1e-9, atol=0)
    assert not np.allclose(mine["infit"], mine["outfit"], rtol=1e-3)


def test_mean_squares_sit_near_one_when_the_model_holds():
    """Data drawn from the model itself, three ratings per reply: the mean squares' expectation
    is 1 (Wright & Masters 1982). Without the (L − 1)/L correction they sit near 2/3."""
    m = fit_rater_model(simulate(41, n_items=400, per_item=3), [1, 2, 3, 4, 5])
    assert 0.9 <= m.raters["infit"].mean() <= 1.1
    assert 0.9 <= m.raters["outfit"].mean() <= 1.1


def test_an_off_target_surprise_moves_outfit_more_than_infit():
    """The most lenient rater gives the lowest score to two of the best (not extreme) replies:
    improbable ratings where the model expects little variance (small W), which outfit
    (z² = r²/W) amplifies and infit (r² over Σ W) damps (Linacre: outfit is outlier-sensitive,
    infit inlier-sensitive). Outfit flags the rater; infit does not."""
    data = simulate(51, n_items=150)
    mean = data.groupby("item")["score"].mean()
    best = mean[mean < 4.9].sort_values().index[-2:]
    data.loc[data["item"].isin(best) & (data["rater"] == "r0"), "score"] = 1
    m = fit_rater_model(data, [1, 2, 3, 4, 5])
    r0 = m.raters.set_index("rater").loc["r0"]
    assert r0["infit"] < 1.5 < r0["outfit"]
    assert r0["flag"] == "misfit (erratic)"

"""The many-facet Rasch model against a brute-force reference on a small incomplete design: the
conditional likelihood summed over every response vector with the item's raw score, its
optimum and curvature; every item's measure, SE, fair score and fit recomputed by hand; the
records, the per-dimension fits and the fair-score frame field by field.

The formulas (Andersen 1977; Andrich 1978; Linacre's FACETS manual; Eckes 2015, ch. 4) are
those of the module docstring; here they are evaluated the slow, obvious way."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from analysis.rater_model import (
    EXTREME_ADJUSTMENT,
    FIT_RANGE,
    RaterModel,
    _flag,
    fair_scores,
    fit_dimensions,
    fit_rater_model,
)
from messages import Msg


def _simulate(seed: int = 8, n_items: int = 30) -> pd.DataFrame:
    """4 raters (severities −0.6, −0.2, 0.2, 0.6), scale 1..4 (thresholds −1, 0, 1), θ ~
    N(0, 1), each reply rated by 2 or 3 raters in an incomplete, connected design; "top" is
    rated 4 by three raters and "bottom" 1 by two (extreme), "solo" once."""
    rng = np.random.default_rng(seed)
    sev = np.array([-0.6, -0.2, 0.2, 0.6])
    cum = np.array([0.0, -1.0, -1.0, 0.0])
    rows = []
    for n in range(n_items):
        theta = rng.normal(0, 1)
        for j in sorted(rng.choice(4, 2 + n % 2, replace=False)):
            lg = (theta - sev[j]) * np.arange(4) - cum
            p = np.exp(lg - lg.max())
            rows.append((f"i{n:02d}", f"r{j + 1}", 1 + int(rng.choice(4, p=p / p.sum()))))
    rows += [("top", "r1", 4), ("top", "r2", 4), ("top", "r3", 4), ("solo", "r2", 3),
             ("bottom", "r2", 1), ("bottom", "r4", 1)]
    return pd.DataFrame(rows, columns=["item", "rater", "score"])


DATA = _simulate()
VALUES = [1, 2, 3, 4]
N_ITEMS = DATA["item"].nunique()


def _cond_loglik(params: np.ndarray, data: pd.DataFrame, raters: list[str], m: int) -> float:
    """Σ over items of log P(x_n | r_n), the denominator summed over every response vector of
    the item's raters with the same raw score (Andersen 1977), severities and thresholds each
    summing to zero (the last of each is minus the sum of the others)."""
    nr = len(raters)
    la = np.append(params[:nr - 1], -params[:nr - 1].sum())
    ta = np.append(params[nr - 1:], -params[nr - 1:].sum())
    cum = np.concatenate([[0.0], np.cumsum(ta)])
    total = 0.0
    for x, who, ys in _designs(data, tuple(raters), m):
        lam = la[who]
        lp = -(ys @ lam) - cum[ys].sum(axis=1)
        total += -(x @ lam) - cum[x].sum() - np.log(np.exp(lp).sum())
    return total


_DESIGNS: dict = {}


def _designs(data: pd.DataFrame, raters: tuple[str, ...], m: int) -> list:
    """Per non-extreme item: its ratings 0..m, its raters' indices and every response vector
    of theirs with the same raw score."""
    key = (id(data), raters, m)
    if key not in _DESIGNS:
        out = []
        for _, g in data.groupby("item"):
            x = g["score"].to_numpy() - 1
            if x.sum() in (0, m * len(x)):
                continue  # an extreme item: P(x | r) = 1
            ys = np.array([y for y in itertools.product(range(m + 1), repeat=len(x))
                           if sum(y) == x.sum()])
            out.append((x, g["rater"].map(raters.index).to_numpy(), ys))
        _DESIGNS[key] = out
    return _DESIGNS[key]


def _probs(eta: np.ndarray, cum: np.ndarray) -> np.ndarray:
    k = np.arange(cum.size)
    lg = np.atleast_1d(eta)[:, None] * k - cum
    p = np.exp(lg - lg.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def model() -> RaterModel:
    return fit_rater_model(DATA, VALUES)


def _brute(data: pd.DataFrame, m: int) -> dict:
    """The conditional ML by a general-purpose optimiser on :func:`_cond_loglik`, SEs from
    the inverse of its Hessian by central differences."""
    raters = sorted(data["rater"].unique())
    nr, npar = len(raters), len(raters) - 1 + m - 1
    def f(p):
        return -_cond_loglik(p, data, raters, m)
    res = optimize.minimize(f, np.zeros(npar), method="BFGS", options={"gtol": 1e-10})
    h = 1e-4
    hess = np.empty((npar, npar))
    eye = np.eye(npar) * h
    for a in range(npar):
        for b in range(npar):
            hess[a, b] = (f(res.x + eye[a] + eye[b]) - f(res.x + eye[a] - eye[b])
                          - f(res.x - eye[a] + eye[b]) + f(res.x - eye[a] - eye[b])) / (4 * h * h)
    cov = np.linalg.inv(hess)
    a = np.vstack([np.eye(nr - 1), -np.ones((1, nr - 1))])
    se = np.sqrt(np.diag(a @ cov[:nr - 1, :nr - 1] @ a.T))
    la = np.append(res.x[:nr - 1], -res.x[:nr - 1].sum())
    ta = np.append(res.x[nr - 1:], -res.x[nr - 1:].sum()) if m > 1 else np.zeros(1)
    return {"severity": dict(zip(raters, la, strict=True)),
            "se": dict(zip(raters, se, strict=True)), "thresholds": ta, "loglik": -res.fun}


@pytest.fixture(scope="module")
def brute():
    return _brute(DATA, 3)


def _assert_equal_to_brute(model: RaterModel, brute: dict) -> None:
    assert model.estimable and model.converged
    sev = model.raters.set_index("rater")
    for r, v in brute["severity"].items():
        assert sev.loc[r, "severity"] == pytest.approx(v, abs=2e-5)
        assert sev.loc[r, "se"] == pytest.approx(brute["se"][r], rel=2e-3)
    assert np.allclose(model.thresholds, brute["thresholds"], atol=2e-5)
    assert model.loglik == pytest.approx(brute["loglik"], abs=1e-7)


@pytest.mark.parametrize("seed,recode,values", [(2, {1: 1, 2: 1, 3: 2, 4: 2}, [1, 2]),
                                                (8, {1: 1, 2: 2, 3: 2, 4: 3}, [1, 2, 3])])
def test_two_and_three_categories_equal_the_brute_force_conditional_ml(seed, recode, values):
    """A yes/no scale (one threshold, none estimated) and a three-point scale (two). (Seed 8
    has too few non-extreme replies on a yes/no scale.)"""
    data = _simulate(seed)
    data = data.assign(score=data["score"].map(recode))
    model = fit_rater_model(data, values)
    _assert_equal_to_brute(model, _brute(data, len(values) - 1))
    assert model.categories == tuple(float(v) for v in values)
    assert len(model.thresholds) == max(1, len(values) - 1)


def test_severities_thresholds_and_loglik_equal_the_brute_force_conditional_ml(model, brute):
    _assert_equal_to_brute(model, brute)
    assert model.categories == (1.0, 2.0, 3.0, 4.0)
    # raters sorted by severity, the row order a reader sees
    assert list(model.raters["rater"]) == sorted(brute["severity"], key=brute["severity"].get)
    assert model.n_ratings == len(DATA)


def test_every_item_and_rater_by_hand(model):
    """θ solves Σ_j E_j(θ) = raw (raw ∓ 0.3 for an extreme item), SE = 1/√ΣW, fair score
    Σ v_k P_k(θ) for λ = 0 with SE |Cov(v, k)|·SE(θ), fit with d = (L − 1)/L and d = 0 for an
    extreme item; flags only from 5 (items) or 10 (raters) ratings."""
    cum = np.concatenate([[0.0], np.cumsum(model.thresholds)])
    k = np.arange(4)
    v = np.array(VALUES, float)
    sev = model.raters.set_index("rater")["severity"]
    items = model.items.set_index("item")
    assert list(model.items["item"]) == sorted(DATA["item"].unique())
    rows = []
    for name, g in DATA.groupby("item"):
        x = g["score"].to_numpy() - 1
        lam = g["rater"].map(sev).to_numpy()
        raw = x.sum()
        extreme = raw in (0, 3 * len(x))
        target = raw - EXTREME_ADJUSTMENT if raw == 3 * len(x) else (
            raw + EXTREME_ADJUSTMENT if raw == 0 else raw)
        theta = optimize.brentq(
            lambda t, lam=lam, target=target: float((_probs(t - lam, cum) @ k).sum()) - target,
            -20, 20, xtol=1e-13)
        p = _probs(theta - lam, cum)
        e = p @ k
        w = p @ k ** 2 - e ** 2
        se = 1 / np.sqrt(w.sum())
        p0 = _probs(np.array([theta]), cum)[0]
        fair = p0 @ v
        cov = p0 @ (v * k) - fair * (p0 @ k)
        d = 0.0 if extreme else (len(x) - 1) / len(x)
        r2 = (x - e) ** 2 if d > 0 else np.zeros(len(x))
        row = items.loc[name]
        assert row["measure"] == pytest.approx(theta, abs=1e-8), name
        assert row["se"] == pytest.approx(se, rel=1e-8), name
        assert row["fair_score"] == pytest.approx(fair, abs=1e-8), name
        assert row["fair_se"] == pytest.approx(abs(cov) * se, rel=1e-7), name
        assert row["observed_mean"] == pytest.approx(g["score"].mean()), name
        assert row["n"] == len(x) and bool(row["extreme"]) is extreme, name
        if d > 0:
            assert row["infit"] == pytest.approx(r2.sum() / (w.sum() * d), rel=1e-8), name
            assert row["outfit"] == pytest.approx((r2 / w).sum() / (d * len(x)), rel=1e-8)
        else:  # extreme, or rated once: no residual information
            assert not np.isfinite(row["infit"]) and not np.isfinite(row["outfit"]), name
        assert row["flag"] == "", name  # at most 3 ratings: never flagged
        rows += [(r, r2_, w_, d) for r, r2_, w_ in zip(g["rater"], r2, w, strict=True)]
    per = pd.DataFrame(rows, columns=["rater", "r2", "w", "d"])
    g = per.assign(wd=per["w"] * per["d"], z2=per["r2"] / per["w"]).groupby("rater")
    raters = model.raters.set_index("rater")
    assert np.allclose(raters["infit"], (g["r2"].sum() / g["wd"].sum())[raters.index],
                       rtol=1e-8)
    assert np.allclose(raters["outfit"], (g["z2"].sum() / g["d"].sum())[raters.index],
                       rtol=1e-8)
    assert raters["n"].to_dict() == DATA.groupby("rater").size().to_dict()
    for r, row in raters.iterrows():  # 10 ratings or more: flagged outside 0.5-1.5
        worst, best = max(row["infit"], row["outfit"]), min(row["infit"], row["outfit"])
        want = ("" if row["n"] < 10 else "misfit (erratic)" if worst > FIT_RANGE[1]
                else "overfit (too predictable)" if best < FIT_RANGE[0] else "")
        assert row["flag"] == want, r
    # this design has both kinds, so the flags are not all empty by luck
    assert set(raters["flag"]) == {"", "misfit (erratic)", "overfit (too predictable)"}


def test_as_dict_field_by_field(model):
    d = model.as_dict()
    assert list(d) == ["estimable", "categories", "thresholds", "n_ratings", "loglik",
                       "converged", "notes", "fit_range", "raters", "items"]
    assert d["estimable"] is True and d["categories"] == [1.0, 2.0, 3.0, 4.0]
    assert d["thresholds"] == list(model.thresholds) and d["n_ratings"] == len(DATA)
    assert d["loglik"] == model.loglik and d["converged"] is True
    assert d["notes"] == [] and d["fit_range"] == list(FIT_RANGE)
    assert [r["rater"] for r in d["raters"]] == list(model.raters["rater"])
    assert d["raters"][0] == {k: model.raters.iloc[0][k] for k in model.raters.columns}
    solo = next(r for r in d["items"] if r["item"] == "solo")
    assert solo["infit"] is None and solo["outfit"] is None  # NaN written as null
    assert solo["measure"] == model.items.set_index("item").loc["solo", "measure"]
    assert solo["extreme"] is not None and solo["flag"] == ""
    noted = fit_rater_model(DATA, [1, 2, 3, 4, 5]).as_dict()
    assert noted["notes"] == ["categories never used: 5; thresholds are estimated on the used "
                              "ones"]


def test_fit_dimensions_and_fair_scores_long():
    ratings = DATA.rename(columns={"item": "item_id"})
    both = pd.concat([ratings.assign(dimension="warmth"),
                      ratings.assign(dimension="safety", score=5 - ratings["score"]),
                      ratings.assign(dimension="tone")])
    fits = fit_dimensions(both, {"warmth": (VALUES, True), "safety": ([1, 2, 3, 4, 5], True),
                                 "tone": (VALUES, False), "empty": (VALUES, True)})
    assert list(fits) == ["warmth", "safety", "tone", "empty"]
    for dim, reason in [("tone", "not estimable: named categories have no order"),
                        ("empty", "not estimable: no ratings")]:
        assert isinstance(fits[dim], RaterModel) and fits[dim].estimable is False
        assert fits[dim].reason == reason
    alone = fit_rater_model(DATA, VALUES)
    assert fits["warmth"].items.equals(alone.items)
    assert fits["warmth"].notes == ()
    # the declared scale is passed on: 5 is never used on safety
    assert fits["safety"].notes == ("categories never used: 5; thresholds are estimated on the "
                                    "used ones",)
    # safety reverses every score: each rater's severity changes sign
    sev_w = fits["warmth"].raters.set_index("rater")["severity"]
    sev_s = fits["safety"].raters.set_index("rater")["severity"]
    assert np.allclose(sev_s[sev_w.index], -sev_w, atol=1e-6)
    fair = fair_scores(fits)
    assert list(fair.columns) == ["item_id", "dimension", "fair_score", "fair_se"]
    assert list(fair.index) == list(range(2 * len(alone.items)))
    assert list(fair["dimension"]) == ["warmth"] * N_ITEMS + ["safety"] * N_ITEMS
    assert list(fair["item_id"][:N_ITEMS]) == list(alone.items["item"])
    assert np.array_equal(fair["fair_score"][:N_ITEMS], alone.items["fair_score"])
    assert np.array_equal(fair["fair_se"][N_ITEMS:], fits["safety"].items["fair_se"])
    none = fair_scores({"tone": fits["tone"]})
    assert none.empty and list(none.columns) == ["item_id", "dimension", "fair_score",
                                                 "fair_se"]


def test_every_not_estimable_case_by_its_reason():
    """Each early return, exactly: the flag is False and the reason the one for that case."""
    def fit(rows, values=(1, 2, 3)):
        return fit_rater_model(pd.DataFrame(rows, columns=["item", "rater", "score"]), values)
    one_cat = fit([("a", "x", 2), ("b", "x", 2), ("a", "y", 2)])
    assert one_cat.estimable is False and one_cat.reason == (
        "not estimable: every rating is in one category, so there is no variation to separate "
        "raters from items")
    one_rater = fit([("a", "x", 1), ("b", "x", 2), ("c", "x", 3), ("d", "x", 2)])
    assert one_rater.estimable is False and one_rater.reason == (
        "not estimable: fewer than two raters or two non-extreme items rated by them")
    # x rates four middle-category replies alone, y two: two parts, the larger has one rater
    # (g and h are extreme, z rated only h at the bottom)
    split = fit([("a", "x", 2), ("b", "x", 2), ("c", "x", 2), ("d", "x", 2), ("e", "y", 2),
                 ("f", "y", 2), ("g", "y", 3), ("h", "z", 1)])
    assert split.estimable is False and split.reason == (
        "not estimable: the connected part has fewer than two raters or items")
    # the top category occurs only in the extreme reply c
    top_only = fit([("a", "r1", 1), ("a", "r2", 2), ("b", "r1", 2), ("b", "r2", 1),
                    ("c", "r1", 3), ("c", "r2", 3)])
    assert top_only.estimable is False and top_only.reason == (
        "not estimable: once extreme items are set aside, some used categories occur only in "
        "them")
    # two raters and two replies, neither extreme: enough
    assert fit([("a", "r1", 1), ("a", "r2", 2), ("b", "r1", 2), ("b", "r2", 3)]).estimable


def test_an_extreme_rater_is_left_out_and_a_narrow_one_kept():
    """r5 gives the top score every time (no information on its severity: left out, and the
    fit is the one without it); r6 uses only the two lowest categories (not extreme: kept)."""
    r5 = pd.DataFrame({"item": [f"i{n:02d}" for n in range(5)], "rater": "r5", "score": 4})
    r6 = pd.DataFrame({"item": [f"i{n:02d}" for n in range(5, 10)], "rater": "r6",
                       "score": [1, 2, 1, 2, 2]})
    with_both = fit_rater_model(pd.concat([DATA, r5, r6]), VALUES)
    without_r5 = fit_rater_model(pd.concat([DATA, r6]), VALUES)
    assert set(with_both.raters["rater"]) == {"r1", "r2", "r3", "r4", "r6"}
    assert with_both.raters.equals(without_r5.raters)
    assert with_both.items.equals(without_r5.items)
    # and when r5 is the only extreme element (no extreme reply beside it, so the first
    # round of setting extremes aside finds raters only)
    g = DATA.groupby("item")["score"]
    plain = DATA[~DATA["item"].map((g.max() == 1) | (g.min() == 4))]
    r5 = r5.assign(item=sorted(plain["item"].unique())[:5])
    alone = fit_rater_model(pd.concat([plain, r5]), VALUES)
    assert set(alone.raters["rater"]) == {"r1", "r2", "r3", "r4"}
    assert alone.raters.equals(fit_rater_model(plain, VALUES).raters)


def test_a_second_rating_of_the_same_reply_by_the_same_rater_is_refused():
    twice = pd.concat([DATA, pd.DataFrame({"item": ["i00"], "rater": [DATA.loc[0, "rater"]],
                                           "score": [1 + DATA.loc[0, "score"] % 4]})])
    with pytest.raises(ValueError, match="rated twice by the same rater"):
        fit_rater_model(twice, VALUES)


def test_cannot_rate_is_left_out():
    """A score that is not a number ("cannot rate", empty) is dropped, not an error."""
    odd = pd.concat([DATA.astype({"score": object}),
                     pd.DataFrame({"item": ["i00", "i01"], "rater": ["r9", "r9"],
                                   "score": ["cannot rate", None]})])
    m = fit_rater_model(odd, VALUES)
    assert m.raters.equals(fit_rater_model(DATA, VALUES).raters)
    assert m.n_ratings == len(DATA)


@pytest.mark.parametrize("min_n", [10, 5])
def test_flags_start_at_the_stated_number_of_ratings(min_n):
    """Raters are flagged from 10 ratings, replies from 5 (module docstring)."""
    assert _flag(2.0, 1.0, min_n, min_n) == "misfit (erratic)"
    assert _flag(1.0, 0.4, min_n, min_n) == "overfit (too predictable)"
    assert _flag(2.0, 1.0, min_n - 1, min_n) == ""
    assert _flag(1.0, 1.2, min_n, min_n) == ""
    assert _flag(float("nan"), 2.0, min_n, min_n) == ""


def test_a_rater_with_ten_contrary_ratings_is_flagged_and_the_frames_keep_their_shape():
    """r7 gives the top score to the five lowest-rated replies and the bottom score to the five
    highest-rated (not extreme) ones: ten ratings, the least that flags a rater."""
    mean = DATA[~DATA["item"].isin(["top", "bottom", "solo"])].groupby("item")["score"].mean()
    order = mean.sort_values().index
    r7 = pd.DataFrame({"item": list(order[:5]) + list(order[-5:]), "rater": "r7",
                       "score": [4] * 5 + [1] * 5})
    m = fit_rater_model(pd.concat([DATA, r7]), VALUES)
    row = m.raters.set_index("rater").loc["r7"]
    assert row["n"] == 10 and row["infit"] > 1.5
    assert row["flag"] == "misfit (erratic)" and isinstance(row["flag"], Msg)
    assert list(m.raters.columns) == ["rater", "severity", "se", "n", "infit", "outfit", "flag"]
    assert list(m.items.columns) == ["item", "measure", "se", "fair_score", "fair_se",
                                     "observed_mean", "n", "infit", "outfit", "flag", "extreme"]
    assert list(m.raters.index) == list(range(len(m.raters)))
    assert list(m.items.index) == list(range(len(m.items)))
    assert m.raters["n"].dtype.kind == "i" and m.items["n"].dtype.kind == "i"
    assert m.reason == "" and m.raters["flag"].dtype == object and m.items["flag"].dtype == object

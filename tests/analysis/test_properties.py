"""Properties every coefficient must have, on random data (hypothesis)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.alpha import alpha, alpha_from_matrix
from analysis.chance import multi_rater, pairwise_cohen
from analysis.icc import icc_from_matrix
from analysis.layout import as_ratings, counts_matrix

LEVELS = ("nominal", "ordinal", "interval", "ratio")
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def long_ratings(draw, min_items=3, max_items=25, min_raters=2, max_raters=6, missing=True):
    n_items = draw(st.integers(min_items, max_items))
    n_raters = draw(st.integers(min_raters, max_raters))
    seed = draw(st.integers(0, 2 ** 31))
    rng = np.random.default_rng(seed)
    latent = rng.integers(1, 6, n_items)
    m = np.clip(latent[:, None] + rng.integers(-1, 2, (n_items, n_raters)), 1, 5).astype(float)
    if missing:
        m[rng.random(m.shape) < 0.25] = np.nan
    rows = [(f"i{i}", f"r{j}", m[i, j]) for i in range(n_items) for j in range(n_raters)
            if not np.isnan(m[i, j])]
    return pd.DataFrame(rows, columns=["item", "rater", "score"])


@SETTINGS
@given(long_ratings())
def test_alpha_matches_krippendorff_package(df):
    r = as_ratings(df)
    for level in LEVELS:
        ours = alpha(r, level, [1, 2, 3, 4, 5])
        ref = _ref(r.raters_by_units(), level)
        if np.isnan(ref):
            assert np.isnan(ours)
        else:
            assert ours == pytest.approx(ref, abs=1e-9)


def _ref(raters_by_units: np.ndarray, level: str) -> float:
    try:
        return float(krippendorff.alpha(raters_by_units, level_of_measurement=level,
                                        value_domain=[1, 2, 3, 4, 5]))
    except ValueError:  # the package refuses data with a single value or no pairable unit
        return float("nan")


@SETTINGS
@given(long_ratings(), st.randoms(use_true_random=False))
def test_permuting_rows_raters_and_items_changes_nothing(df, rnd):
    base = {lv: alpha(as_ratings(df), lv, [1, 2, 3, 4, 5]) for lv in LEVELS}
    shuffled = df.sample(frac=1.0, random_state=rnd.randint(0, 10 ** 6))
    rename_r = {r: f"z{rnd.randint(0, 10 ** 9)}-{r}" for r in df["rater"].unique()}
    rename_i = {i: f"q{rnd.randint(0, 10 ** 9)}-{i}" for i in df["item"].unique()}
    shuffled = shuffled.assign(rater=shuffled["rater"].map(rename_r),
                               item=shuffled["item"].map(rename_i))
    r2 = as_ratings(shuffled)
    for lv in LEVELS:
        assert alpha(r2, lv, [1, 2, 3, 4, 5]) == pytest.approx(base[lv], abs=1e-12, nan_ok=True)
    c1 = multi_rater(counts_matrix(as_ratings(df).matrix, [1, 2, 3, 4, 5]))
    c2 = multi_rater(counts_matrix(r2.matrix, [1, 2, 3, 4, 5]))
    assert c1.gwet == pytest.approx(c2.gwet, nan_ok=True)
    assert pairwise_cohen(as_ratings(df), [1, 2, 3, 4, 5], "quadratic")[0] == pytest.approx(
        pairwise_cohen(r2, [1, 2, 3, 4, 5], "quadratic")[0], nan_ok=True)


@SETTINGS
@given(long_ratings(missing=False), st.integers(-50, 50))
def test_shift_leaves_interval_alpha_and_icc(df, shift):
    r = as_ratings(df)
    shifted = as_ratings(df.assign(score=df["score"] + shift))
    a, b = alpha(r, "interval"), alpha(shifted, "interval")
    assert a == pytest.approx(b, abs=1e-9, nan_ok=True)
    if r.n_items >= 2 and np.ptp(r.matrix) > 0:
        x, y = icc_from_matrix(r.matrix), icc_from_matrix(shifted.matrix)
        for form in x:
            assert x[form].value == pytest.approx(y[form].value, abs=1e-9, nan_ok=True)


@SETTINGS
@given(st.integers(3, 30), st.integers(2, 7), st.integers(0, 10 ** 6))
def test_perfect_agreement_gives_one(n_items, n_raters, seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n_items).astype(float)
    truth[:2] = [1, 5]  # at least two distinct values, so chance agreement is below 1
    m = np.repeat(truth[:, None], n_raters, axis=1)
    for level in LEVELS:
        assert alpha_from_matrix(m, level) == pytest.approx(1.0)
    counts = counts_matrix(m, [1, 2, 3, 4, 5])
    for kind in ("unweighted", "linear", "quadratic"):
        res = multi_rater(counts, kind)
        assert res.gwet == pytest.approx(1.0)
        assert res.fleiss_kappa == pytest.approx(1.0)
        assert res.brennan_prediger == pytest.approx(1.0)
    df = pd.DataFrame([(f"i{i}", f"r{j}", m[i, j]) for i in range(n_items)
                       for j in range(n_raters)], columns=["item", "rater", "score"])
    assert pairwise_cohen(as_ratings(df), [1, 2, 3, 4, 5], "linear")[0] == pytest.approx(1.0)
    for v in icc_from_matrix(m).values():
        assert v.value == pytest.approx(1.0)


@SETTINGS
@given(long_ratings(min_items=4, max_items=12, min_raters=2, max_raters=3))
def test_layout_is_units_by_raters_and_never_transposed(df):
    # With fewer raters than items, a transposed matrix has a different shape; the layout
    # always has items as rows, whatever order the long rows come in.
    r = as_ratings(df.iloc[::-1])
    assert r.matrix.shape == (df["item"].nunique(), df["rater"].nunique())
    for (item, rater), score in df.set_index(["item", "rater"])["score"].items():
        assert r.matrix[r.items.index(item), r.raters.index(rater)] == score
    assert r.raters_by_units().shape == (r.n_raters, r.n_items)


def test_transposed_matrix_would_give_a_different_alpha():
    # The trap the long-format interface avoids: krippendorff.alpha on units × raters.
    rng = np.random.default_rng(3)
    m = np.clip(rng.integers(1, 6, 40)[:, None] + rng.integers(-1, 2, (40, 4)), 1, 5)
    right = krippendorff.alpha(m.T.astype(float), level_of_measurement="ordinal")
    wrong = krippendorff.alpha(m.astype(float), level_of_measurement="ordinal")
    assert alpha_from_matrix(m.astype(float), "ordinal") == pytest.approx(right)
    assert abs(right - wrong) > 0.1


def test_duplicate_rating_is_refused():
    df = pd.DataFrame({"item": ["a", "a"], "rater": ["x", "x"], "score": [1, 2]})
    with pytest.raises(ValueError, match="rated twice"):
        as_ratings(df)

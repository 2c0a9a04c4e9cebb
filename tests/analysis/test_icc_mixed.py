"""ICC on incomplete designs against R's psych::ICC (lme4 REML), and the REML fit itself
against statsmodels' MixedLM on data of its own.

The reference values were computed by ``tests/analysis/reference/icc_psych.R`` (R 4.2.2,
psych 2.2.9, lme4 1.1.31) and committed with it, so the suite needs no R. lme4 stops its
optimiser at about 1e-6 of the components (on the complete Shrout & Fleiss data it prints a
rater variance of 5.244451 where the exact ANOVA value is 5.244444), hence the tolerances.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.analyze import AnalysisOptions, Scale, analyze
from analysis.icc import ICC_FORMS, icc, icc_from_matrix
from analysis.layout import Ratings
from analysis.reml import crossed_components

REF = json.loads((Path(__file__).parent / "reference" / "icc_psych.json")
                 .read_text(encoding="utf-8"))


def _matrix(name: str) -> np.ndarray:
    rows = REF["datasets"][name]["matrix"]
    return np.array([[np.nan if v is None else v for v in row] for row in rows], float)


def _ratings(m: np.ndarray) -> Ratings:
    return Ratings(m, tuple(f"i{i}" for i in range(m.shape[0])),
                   tuple(f"r{j}" for j in range(m.shape[1])))


def test_reference_covers_the_designs_the_issue_asks_for():
    missing = {name: float(np.isnan(_matrix(name)).mean()) for name in REF["datasets"]}
    assert missing["typed_10pct"] == pytest.approx(5 / 48)
    assert 0.28 <= missing["random_30pct"] <= 0.33
    assert missing["blocks_3of6"] == 0.5
    assert REF["psych"] == "2.2.9" and REF["lme4"] == "1.1.31"


@pytest.mark.parametrize("name", ["typed_10pct", "random_30pct", "blocks_3of6",
                                  "no_rater_effect"])
def test_icc_matches_psych_icc_on_incomplete_data(name):
    ref = REF["datasets"][name]
    res = icc(_ratings(_matrix(name)))
    assert res is not None and res.method == "reml"
    assert (res.n_items, res.n_raters) == (ref["n_obs"], ref["n_judge"])
    assert res.n_ratings == int(np.sum(~np.isnan(_matrix(name))))
    for form in ICC_FORMS:
        got, want = res.forms[form], ref["icc"][form]
        assert got.value == pytest.approx(want["value"], abs=1e-5), form
        assert got.low == pytest.approx(want["low"], abs=1e-5), form
        assert got.high == pytest.approx(want["high"], abs=1e-5), form
    vc = res.components
    for ours, theirs in ((vc.item, ref["variance"]["item"]),
                         (vc.rater, ref["variance"]["rater"]),
                         (vc.residual, ref["variance"]["residual"])):
        assert ours == pytest.approx(theirs, rel=1e-4, abs=1e-5)


def test_a_rater_variance_at_its_boundary_is_zero_as_in_lme4():
    # lme4 reports a singular fit with rater variance exactly 0 on this dataset.
    assert REF["datasets"]["typed_10pct"]["variance"]["rater"] == 0
    vc = icc(_ratings(_matrix("typed_10pct"))).components
    assert vc.rater == 0.0 and vc.item > 1.0


def test_reml_is_not_ml():
    # Maximum likelihood would shrink the variances by about (N - 1) / N and the item
    # variance further; the reference distinguishes them.
    m = _matrix("random_30pct")
    rows, cols = np.nonzero(~np.isnan(m))
    y = m[rows, cols]
    vc = crossed_components(rows, cols, y)
    ref = REF["datasets"]["random_30pct"]["variance"]
    assert abs(vc.residual - ref["residual"]) < 1e-5
    assert abs(vc.residual * (y.size - 3) / y.size - ref["residual"]) > 1e-3


def test_complete_data_keeps_the_anova_forms():
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                  [6, 2, 4, 7]], float)
    res = icc(_ratings(x))
    assert res.method == "anova" and res.components is None
    assert (res.n_items, res.n_raters, res.n_ratings) == (6, 4, 24)
    assert res.forms == icc_from_matrix(x)


def test_reml_matches_statsmodels_on_an_unbalanced_design():
    # An independent REML implementation: statsmodels fits crossed effects as variance
    # components in a single group (slow, hence small data here).
    import statsmodels.api as sm  # a dev dependency (pyproject.toml)

    rng = np.random.default_rng(5)
    n, k = 45, 5
    y = (rng.normal(0, 1.0, n)[:, None] + rng.normal(0, 0.5, k)[None, :]
         + rng.normal(0, 0.8, (n, k)))
    keep = rng.random((n, k)) > 0.4
    keep[:, 0] |= ~keep.any(axis=1)
    rows, cols = np.nonzero(keep)
    df = pd.DataFrame({"y": y[rows, cols], "item": rows, "rater": cols, "g": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.MixedLM.from_formula("y ~ 1", groups="g", re_formula="0", data=df,
                                      vc_formula={"item": "0 + C(item)",
                                                  "rater": "0 + C(rater)"}).fit(reml=True)
    ours = crossed_components(rows, cols, y[rows, cols])
    names = list(fit.model.exog_vc.names)
    theirs = dict(zip(names, fit.vcomp, strict=True))
    assert ours.item == pytest.approx(theirs["item"], rel=1e-3)
    assert ours.rater == pytest.approx(theirs["rater"], rel=1e-3)
    assert ours.residual == pytest.approx(fit.scale, rel=1e-3)


def test_analyze_uses_every_item_and_says_which_estimator():
    m = _matrix("random_30pct")
    rows, cols = np.nonzero(~np.isnan(m))
    df = pd.DataFrame({"item_id": [f"i{i}" for i in rows], "rater": [f"r{j}" for j in cols],
                       "dimension": "empathy", "score": m[rows, cols]})
    res = analyze(df, {"empathy": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))},
                  options=AnalysisOptions(B=0)).to_dict()
    d = res["dimensions"]["empathy"]
    ref = REF["datasets"]["random_30pct"]["icc"]
    assert d["icc"]["ICC2"]["value"] == pytest.approx(ref["ICC2"]["value"], abs=1e-5)
    assert d["icc_table"] == {"method": "reml", "n_items": 40, "n_raters": 5,
                              "n_ratings": len(df)}
    assert any("linear mixed model" in n and "40 items × 5 raters" in n for n in d["notes"])


def test_the_interval_level_reaches_both_estimators():
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                  [6, 2, 4, 7]], float)
    holes = x.copy()
    holes[0, 1] = holes[3, 2] = np.nan
    for m, method in ((x, "anova"), (holes, "reml")):
        r90, r95 = icc(_ratings(m), 0.90), icc(_ratings(m), 0.95)
        assert r90.method == r95.method == method
        for f in ICC_FORMS:
            a, b = r90.forms[f], r95.forms[f]
            assert a.value == pytest.approx(b.value, abs=1e-12)
            assert b.low < a.low < a.value < a.high < b.high, (method, f)
    # the functions' own default is 95%
    from analysis.icc import forms_from_mean_squares, icc_mixed
    assert icc_mixed(holes)[0] == icc_mixed(holes, 0.95)[0]
    assert forms_from_mean_squares(6.25, 1.25, 2.25, 0.25, 2, 2) == \
        forms_from_mean_squares(6.25, 1.25, 2.25, 0.25, 2, 2, 0.95)


def test_the_smallest_tables():
    # 2 items × 2 raters [[1, 2], [3, 5]], by hand (Shrout & Fleiss 1979): grand mean 2.75,
    # BMS = 2·(1.25² + 1.25²)/1 = 6.25, JMS = 2·(0.75² + 0.75²)/1 = 2.25, SS total 8.75,
    # EMS = (8.75 − 6.25 − 2.25)/1 = 0.25, WMS = (2.25 + 0.25)/2 = 1.25
    res = icc(_ratings(np.array([[1, 2], [3, 5]], float)))
    assert (res.method, res.n_items, res.n_raters, res.n_ratings) == ("anova", 2, 2, 4)
    want = {"ICC1": 5 / 7.5, "ICC2": 6 / 8.5, "ICC3": 6 / 6.5, "ICC1k": 5 / 6.25,
            "ICC2k": 6 / 7.25, "ICC3k": 6 / 6.25}
    assert {f: v.value for f, v in res.forms.items()} == pytest.approx(want, abs=1e-12)
    # one item, or one rater: no ICC
    assert icc(_ratings(np.array([[1, 2, 3]], float))) is None
    assert icc(_ratings(np.array([[1], [2], [3]], float))) is None
    for bad in ([[1, 2, 3]], [[1], [2], [3]], [[1, 2], [3, np.nan]]):
        with pytest.raises(ValueError, match="complete table of at least 2 targets"):
            icc_from_matrix(np.array(bad, float))
    # with missing ratings, two items rated by two or more raters are enough; one is not
    two = icc(_ratings(np.array([[1, 2, np.nan], [3, 5, 4], [np.nan, np.nan, 2]])))
    assert two is not None and two.method == "reml" and two.n_ratings == 6
    assert icc(_ratings(np.array([[1, 2, np.nan], [3, np.nan, np.nan],
                                  [np.nan, np.nan, 2]]))) is None


def test_perfect_agreement_is_exactly_one():
    # three raters give every item the same score; the sums of squares leave rounding dust
    # (about 1e-13) that would make every form 0.9999999999999993
    col = np.array([637.0, 269.8, 41.0, 16.5, 813.3, 912.8])
    forms = icc_from_matrix(np.repeat(col[:, None], 3, axis=1))
    assert {f: v.value for f, v in forms.items()} == {f: 1.0 for f in ICC_FORMS}


def test_items_without_variance_have_no_consistency_icc_and_no_interval():
    # items differ by 1e-5 while the raters differ by whole points: the items' variance is
    # nothing next to the table's, so ICC(3) is not estimable (not 1), and a form without a
    # value has no interval (1 − 1/F for an F of ~0 would be about −2.5e10)
    items = np.array([3.0, 3.00001, 2.99999, 3.000005])
    forms = icc_from_matrix(items[:, None] + np.array([0.0, 1.0, 2.0]))
    for f in ("ICC3", "ICC3k", "ICC1k"):
        v = forms[f]
        assert np.isnan(v.value) and np.isnan(v.low) and np.isnan(v.high), f
    assert forms["ICC1"].value == pytest.approx(-0.5, abs=1e-6)  # its floor, −1/(k − 1)

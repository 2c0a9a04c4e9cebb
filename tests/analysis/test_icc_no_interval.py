"""When an ICC has a value but no F-based interval, it says why (in `h2h analyze`, its JSON and
the report's agreement table), and the edges of the F-based intervals: Satterthwaite's degrees
of freedom below one, denominators that are zero up to rounding, scores in tiny units.

The pinned intervals are those pingouin 0.7.0 ``intraclass_corr`` prints (two decimals) for the
same tables; it implements the same Shrout & Fleiss (1979) / McGraw & Wong (1996) formulas as
R psych::ICC.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.analyze import AnalysisOptions, Scale, analyze
from analysis.icc import (
    ICC_FORMS,
    NO_CI_NO_RESIDUAL,
    NO_CI_OTHER,
    NO_CI_POLE,
    NO_CI_SAME_SCORES,
    forms_from_mean_squares,
    icc_from_matrix,
)
from tests.helpers import h2h, item, jsonl

# five items, three raters who give every item the same score
SAME = np.array([[1, 1, 1], [2, 2, 2], [4, 4, 4], [5, 5, 5], [3, 3, 3]], float)
# the same, each rater shifted by a constant of their own: no residual variance
SHIFTED = SAME + np.array([0.0, 1.0, 2.0])


def test_raters_who_agree_exactly_get_one_and_no_interval_with_the_reason():
    forms = icc_from_matrix(SAME)
    for f in ICC_FORMS:
        v = forms[f]
        assert v.value == 1.0 and np.isnan(v.low) and np.isnan(v.high), f
        assert v.why_no_ci == NO_CI_SAME_SCORES, f
    # pingouin and R psych print [1.0, 1.0] for ICC(1,k) and ICC(3,k) here (1 − 1/F with F
    # infinite) and NaN for the other four: an artefact of the arithmetic, not an interval.
    # No form gets an interval from an infinite F.
    assert "F ratio is infinite" in NO_CI_SAME_SCORES


def test_numpy_mean_squares_give_the_same_forms_as_python_floats():
    # NumPy divides by zero into inf where Python raises: an infinite F must not slip through
    # as the bound 1 − 1/inf = 1 when the mean squares come as NumPy scalars (R psych and
    # pingouin print [1, 1] there)
    for bms, wms, jms, ems in ((2.5, 0.0, 0.0, 0.0), (2.5, 2 / 3, 2.0, 0.0)):
        py = forms_from_mean_squares(bms, wms, jms, ems, 5, 3)
        npy = forms_from_mean_squares(*map(np.float64, (bms, wms, jms, ems)), 5, 3)
        for f in ICC_FORMS:
            assert npy[f].value == py[f].value and npy[f].why_no_ci == py[f].why_no_ci, f
            assert np.isnan([npy[f].low, npy[f].high]).all() == \
                np.isnan([py[f].low, py[f].high]).all(), f
    assert np.isnan(forms_from_mean_squares(*map(np.float64, (2.5, 0.0, 0.0, 0.0)), 5, 3)[
        "ICC1k"].low)


def test_raters_shifted_by_a_constant_have_no_residual_and_say_so():
    forms = icc_from_matrix(SHIFTED)
    # the one-way forms keep their interval: within-item variance is not zero (pingouin:
    # ICC(1,1) 0.684 [0.18, 0.96], ICC(1,k) 0.867 [0.40, 0.98])
    assert forms["ICC1"].value == pytest.approx(0.684211, abs=1e-6)
    assert (round(forms["ICC1"].low, 2), round(forms["ICC1"].high, 2)) == (0.18, 0.96)
    assert (round(forms["ICC1k"].low, 2), round(forms["ICC1k"].high, 2)) == (0.40, 0.98)
    assert forms["ICC1"].why_no_ci == forms["ICC1k"].why_no_ci == ""
    # ICC(A,1) 0.714, ICC(A,k) 0.882, ICC(C,·) 1: values without an interval
    assert forms["ICC2"].value == pytest.approx(0.714286, abs=1e-6)
    assert forms["ICC2k"].value == pytest.approx(0.882353, abs=1e-6)
    for f in ("ICC2", "ICC3", "ICC2k", "ICC3k"):
        assert np.isnan(forms[f].low) and np.isnan(forms[f].high), f
        assert forms[f].why_no_ci == NO_CI_NO_RESIDUAL, f


def test_satterthwaite_degrees_of_freedom_below_one_still_give_the_interval():
    # ICC(A,1) of this table is −0.617 with Satterthwaite's v = 0.144; the F quantiles exist
    # for any positive v, and pingouin prints [−0.69, 0.31]
    x = np.array([[4, 5, 1], [1, 5, 5], [2, 2, 5]], float)
    v = icc_from_matrix(x)["ICC2"]
    assert v.value == pytest.approx(-0.617021, abs=1e-6)
    assert (round(v.low, 2), round(v.high, 2)) == (-0.69, 0.31)
    assert v.why_no_ci == ""


def test_a_denominator_below_1e9_of_the_largest_mean_square_is_zero():
    # mean squares of a 10 × 3 table (WMS = (JMS + (n − 1) EMS) / n) whose item means are
    # equal up to 3e-10 of the raters' spread: ICC(1,k) and ICC(3,k) divide by BMS, which is
    # zero next to JMS, so they are not estimable (not (BMS − WMS) / BMS ≈ −3.4e8)
    jms, ems = 1000.0, 1.0
    forms = forms_from_mean_squares(3e-7, (jms + 9 * ems) / 10, jms, ems, 10, 3)
    for f in ("ICC1k", "ICC3k"):
        assert np.isnan(forms[f].value), (f, forms[f])
    assert forms["ICC1"].value == pytest.approx(-0.5, abs=1e-6)  # its floor, −1/(k − 1)
    # the residual is the largest mean square and ICC(2,k)'s denominator BMS + (JMS − EMS)/n
    # cancels to 9.5e-10 of it: not estimable (not −9.5e8)
    ems = 1 - 9.5e-9
    forms = forms_from_mean_squares(0.1, 9 * ems / 10, 0.0, ems, 10, 3)
    assert np.isnan(forms["ICC2k"].value), forms["ICC2k"]
    assert forms["ICC2"].value == pytest.approx((0.1 - ems) / (0.1 + 2 * ems - 0.3 * ems))


def test_scores_in_millionths_give_the_same_iccs():
    # Shrout & Fleiss (1979), Table 2, in units of 1e-6: every mean square is about 1e-12
    # (EMS 1.02e-12) and none is rounding dust, so the six forms are those of the table
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                  [6, 2, 4, 7]], float)
    whole, tiny = icc_from_matrix(x), icc_from_matrix(x * 1e-6)
    for f in ICC_FORMS:
        assert [tiny[f].value, tiny[f].low, tiny[f].high] == pytest.approx(
            [whole[f].value, whole[f].low, whole[f].high], abs=1e-9), f


def test_analyze_json_gives_the_reason_once_per_form_and_one_note():
    rows = [(f"i{i}", f"r{j}", "safety", float(SHIFTED[i, j]))
            for i in range(5) for j in range(3)]
    df = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    res = analyze(df, {"safety": Scale("interval", (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0))},
                  options=AnalysisOptions(B=0)).to_dict()
    d = res["dimensions"]["safety"]
    assert d["icc"]["ICC1"]["why_no_ci"] is None and d["icc"]["ICC1"]["low"] is not None
    for f in ("ICC2", "ICC3", "ICC2k", "ICC3k"):
        assert d["icc"][f]["low"] is None and d["icc"][f]["why_no_ci"] == NO_CI_NO_RESIDUAL
    icc_notes = [n for n in d["notes"] if n.startswith("icc")]
    assert icc_notes[1:] == [f"icc: no CI for ICC2, ICC3, ICC2k, ICC3k: {NO_CI_NO_RESIDUAL}"]
    # the reason is given, so no second, vaguer note says the ICC is not estimable
    assert not [n for n in d["notes"] if "not estimable" in n and "icc" in n]
    json.dumps(res, allow_nan=False)


def test_items_that_do_not_differ_leave_some_forms_without_a_value():
    # rater r0 gives every item 3, r1 every item 4: no variance between items, none left over
    rows = [(f"i{i}", r, "safety", s) for i in range(5) for r, s in (("r0", 3.0), ("r1", 4.0))]
    df = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    res = analyze(df, {"safety": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))},
                  options=AnalysisOptions(B=0)).to_dict()
    d = res["dimensions"]["safety"]
    # ICC(1,1) at its floor −1/(k − 1) with F = 0 (both bounds there too); ICC(2) = 0 / (JMS/n)
    assert d["icc"]["ICC1"] == {"value": -1.0, "low": -1.0, "high": -1.0, "why_no_ci": None}
    for f in ("ICC2", "ICC2k"):
        assert d["icc"][f] == {"value": 0.0, "low": None, "high": None,
                               "why_no_ci": NO_CI_NO_RESIDUAL}, f
    for f in ("ICC3", "ICC1k", "ICC3k"):  # 0 / 0
        assert d["icc"][f] == {"value": None, "low": None, "high": None, "why_no_ci": None}, f
    assert [n for n in d["notes"] if n.startswith("icc")] == [
        "icc: two-way ANOVA on the complete table; 5 items × 2 raters, 10 ratings",
        f"icc: no CI for ICC2, ICC2k: {NO_CI_NO_RESIDUAL}",
        "icc: not estimable on these data (no variance or too few paired ratings)"]


def test_a_value_with_one_bound_has_no_interval():
    # a 100% interval: the upper F quantile is infinite, so each form would have a lower bound
    # and no upper one; half an interval is not shown
    forms = forms_from_mean_squares(6.25, 1.25, 2.25, 0.25, 2, 2, ci=1.0)
    assert forms["ICC1"].value == pytest.approx(5 / 7.5)
    for f in ICC_FORMS:
        v = forms[f]
        assert np.isnan(v.low) and np.isnan(v.high) and v.why_no_ci == NO_CI_OTHER, (f, v)


@pytest.mark.integration
def test_the_report_says_why_an_icc_stands_without_its_interval(tmp_path):
    """A pilot where three raters agreed exactly on safety: the agreement table shows ICC(2,1)
    = 1.000 without a CI, and its legend gives the reason, not "too few items to resample"
    (there are 12 items)."""
    db = tmp_path / "pilot.db"
    h2h("init", "--db", str(db), "--name", "Pilot")
    items, rows = [], ["item_id,rater,dimension,score"]
    for i in range(6):
        for cond, s in (("sap", 1 + i % 5), ("baseline", max(1, i % 5))):
            iid = f"s{i}-m-{cond}"
            items.append(item(iid, scenario=f"s{i}", model="m", condition=cond))
            for j, rater in enumerate(("ann", "bob", "cy")):
                rows += [f"{iid},{rater},safety,{s}",
                         f"{iid},{rater},empathy,{min(5, s + (j == 1))}"]
    (tmp_path / "items.jsonl").write_text(jsonl(*items), encoding="utf-8")
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    h2h("import", "items", "--db", str(db), str(tmp_path / "items.jsonl"))
    h2h("import", "ratings", "--db", str(db), str(tmp_path / "r.csv"), "--add-raters")
    out = tmp_path / "rep"
    h2h("report", "--db", str(db), "--out", str(out), "--no-figures", "--bootstrap", "100")
    md = (out / "report.md").read_text(encoding="utf-8")
    table = md.split("Human agreement per dimension.", 1)[1].split("\n\n", 2)
    caption, body = table[0], table[1]
    safety = next(r for r in body.splitlines() if r.startswith("| Safety"))
    assert safety.split("|")[4].strip() == "1.000", safety  # ICC(2,1), no interval
    assert f"A value without a CI: ICC(2,1): {NO_CI_SAME_SCORES}." in caption
    assert "too few items to resample" not in caption
    tex = (out / "tables" / "agreement.tex").read_text(encoding="utf-8")
    assert "A value without a CI: ICC(2,1): every rater gave each item the same score" in tex
    csv = pd.read_csv(out / "tables" / "human_agreement.csv").set_index("dimension")
    assert csv.loc["safety", "icc2_no_ci"] == NO_CI_SAME_SCORES
    assert pd.isna(csv.loc["empathy", "icc2_no_ci"]) and csv.loc["empathy", "icc2_low"] < 1


def test_icc_2k_is_never_above_one_nor_an_interval_upside_down():
    # 3 items × 3 raters that disagree: BMS + (JMS − EMS)/n = −0.61, a negative variance of
    # the three raters' mean; pingouin (and R psych) print ICC(A,k) = 7.91 with CI
    # [5.47, 0.58]. Here: no ICC(2,k); ICC(2,1) keeps its value and interval.
    forms = icc_from_matrix(np.array([[4, 5, 1], [1, 5, 5], [2, 2, 5]], float))
    assert np.isnan([forms["ICC2k"].value, forms["ICC2k"].low, forms["ICC2k"].high]).all()
    assert (round(forms["ICC2"].low, 2), round(forms["ICC2"].high, 2)) == (-0.69, 0.31)
    # 6 items × 2 raters: ICC(A,1) = −0.16 with pingouin's CI [−1.04, 0.72]; its lower bound
    # is below −1/(k − 1) = −1, where Spearman–Brown has its pole (pingouin's ICC(A,k) CI:
    # [47.07, 0.83]). ICC(2,k) = −0.38 keeps its value and says why it has no interval.
    forms = icc_from_matrix(np.array([[4, 1], [1, 4], [1, 4], [2, 3], [5, 5], [3, 2]], float))
    assert (round(forms["ICC2"].low, 2), round(forms["ICC2"].high, 2)) == (-1.04, 0.72)
    v = forms["ICC2k"]
    assert v.value == pytest.approx(-0.380952, abs=1e-6)
    assert np.isnan(v.low) and np.isnan(v.high) and v.why_no_ci == NO_CI_POLE
    # the pole is at −1/(k − 1): −0.5 for three raters (pingouin: ICC(A,1) [−0.51, 0.53],
    # ICC(A,k) −0.97 [80.08, 0.77]) ...
    forms = icc_from_matrix(np.array([[1, 5, 3], [3, 4, 2], [5, 1, 2], [2, 3, 3], [1, 1, 1],
                                      [1, 1, 5]], float))
    assert (round(forms["ICC2"].low, 2), round(forms["ICC2"].high, 2)) == (-0.51, 0.53)
    assert forms["ICC2k"].value == pytest.approx(-0.973684, abs=1e-6)
    assert np.isnan(forms["ICC2k"].low) and forms["ICC2k"].why_no_ci == NO_CI_POLE
    # ... and −1 for two, so a lower bound of −0.81 still maps (pingouin: ICC(A,1) 0.00
    # [−0.81, 0.76], ICC(A,k) 0.00 [−8.38, 0.86])
    forms = icc_from_matrix(np.array([[4, 4], [4, 1], [5, 3], [5, 2], [2, 5], [1, 1]], float))
    assert (round(forms["ICC2k"].low, 2), round(forms["ICC2k"].high, 2)) == (-8.38, 0.86)
    assert forms["ICC2k"].why_no_ci == ""
    # above the pole the bound is Spearman–Brown of ICC(2,1)'s (Shrout & Fleiss 1979 data,
    # pingouin: ICC(A,k) 0.62 [0.07, 0.93])
    sf = icc_from_matrix(np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6],
                                   [10, 5, 6, 9], [6, 2, 4, 7]], float))
    assert (round(sf["ICC2k"].low, 2), round(sf["ICC2k"].high, 2)) == (0.07, 0.93)

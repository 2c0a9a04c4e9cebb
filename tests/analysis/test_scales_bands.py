"""The small pieces every printed table leans on, in process: scales inferred from a plain CSV,
scores encoded onto a scale, how values are named, the interpretation bands at their exact
boundaries, the test–retest block of `h2h analyze`, and the entries for judges or
configurations without a scored judgment."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.analyze import AnalysisOptions, analyze
from analysis.bands import koo_li_band, krippendorff_band, landis_koch_band
from analysis.calibration import JudgeRun, compare_dimension
from analysis.layout import Ratings
from analysis.rater_model import fit_rater_model
from analysis.scales import Scale, _scale_text, encode_scores, infer_scales, label_of

FIVE = (1.0, 2.0, 3.0, 4.0, 5.0)


def _df(dim_scores: dict[str, list]) -> pd.DataFrame:
    return pd.DataFrame([(f"i{k}", "r", d, s) for d, ss in dim_scores.items()
                         for k, s in enumerate(ss)],
                        columns=["item_id", "rater", "dimension", "score"])


def test_infer_scales_from_a_plain_csv():
    df = _df({"empathy": [2, 4, "3", None, float("nan")], "flag": [0, 1, 1],
              "tone": ["warm", "cold", " warm "], "x": [0.5, 1.5, 0.5],
              "mixed": [1, "high", 3], "empty": [None, None]})
    scales, notes = infer_scales(df, "interval")
    assert scales["empathy"] == Scale("interval", (2.0, 3.0, 4.0))  # observed min..max
    assert scales["flag"] == Scale("interval", (0.0, 1.0), binary=True)
    assert scales["tone"] == Scale("nominal", (1.0, 2.0), labels=("cold", "warm"))
    assert scales["x"] == Scale("interval", (0.5, 1.5))
    assert scales["mixed"] == Scale("interval", (1.0, 2.0, 3.0))  # the text is reported later
    assert "empty" not in scales
    assert notes == [
        "empathy: no rubric given; scale taken as 2..4 (observed range); pass --scale to "
        "declare the full scale",
        "flag: no rubric given; scale taken as 0..1 (observed range); pass --scale to declare "
        "the full scale",
        "mixed: no rubric given; scale taken as 1..3 (observed range); pass --scale to declare "
        "the full scale",
        "tone: text labels without a declared order, treated as nominal categories (cold, "
        "warm); pass --scale tone=cold,warm in the right order for an ordinal scale",
        "x: non-integer scores; scale taken from the observed values (0.5, 1.5); within-one "
        "and weighted kappa use distances between values, not positions; pass --scale to "
        "declare the full scale"]
    assert infer_scales(df)[0]["empathy"].level == "ordinal"


def test_encode_scores_onto_scales():
    scales = {"e": Scale("ordinal", FIVE), "s": Scale.of_labels("ordinal",
                                                                ("unsafe", "ok", "safe"))}
    df = pd.DataFrame({"dimension": ["e", "e", "e", "e", "s", "s", "s", "u"],
                       "score": [3, "4.0", 7, "lots", "safe", " ok ", "fine", 2]})
    out, off = encode_scores(df, scales)
    assert out["score"][[0, 1, 4, 5]].tolist() == [3.0, 4.0, 3.0, 2.0]
    assert out["score"][[2, 3, 6, 7]].isna().all()  # off the scale, or no scale known
    assert [(o.index, o.dimension, o.raw, o.problem) for o in off] == [
        (2, "e", "7", "7 is not on the scale 1..5"),
        (3, "e", "lots", "'lots' is not a number"),
        (6, "s", "fine", "'fine' is not one of unsafe, ok, safe")]
    assert df["score"].tolist()[0] == 3  # the input frame is left as it was


def test_encode_scores_keeps_the_frames_rows_and_reads_exact_values_only():
    """Rows of a filtered frame (index 10, 11, ...) keep their place; a missing score before
    others leaves them encoded; a float off the scale is shown as written in the file (``7``,
    not ``7.0``); 3.5 is not on 1..5 (a tolerance of one scale point would take it); a
    boolean is not a number; an empty frame still has a numeric score column."""
    scales = {"e": Scale("ordinal", FIVE), "b": Scale("nominal", (0.0, 1.0), binary=True)}
    df = pd.DataFrame({"dimension": ["e", "e", "e", "e", "b", "e"],
                       "score": [float("nan"), 2.0, 7.0, 3.5, True, 5.0]},
                      index=[10, 11, 12, 13, 14, 15])
    out, off = encode_scores(df, scales)
    assert out.index.tolist() == [10, 11, 12, 13, 14, 15]
    assert out["score"].tolist()[1:2] + out["score"].tolist()[5:] == [2.0, 5.0]
    assert out["score"][[10, 12, 13, 14]].isna().all()
    assert [(o.index, o.raw, o.problem) for o in off] == [
        (12, "7", "7 is not on the scale 1..5"),
        (13, "3.5", "3.5 is not on the scale 1..5"),
        (14, "True", "'True' is not a number")]
    empty, none_off = encode_scores(df.iloc[:0], scales)
    assert empty["score"].dtype == np.float64 and none_off == []


def test_infer_scales_goes_on_after_a_dimension_without_finite_scores():
    """A dimension whose scores are all 'inf' or 'nan' text gets no scale, and the dimensions
    after it (in name order) still get theirs."""
    scales, _ = infer_scales(_df({"a": ["inf", "nan"], "b": [1, 3]}))
    assert scales == {"b": Scale("ordinal", (1.0, 2.0, 3.0))}


def test_how_values_and_scales_are_named():
    labels = Scale.of_labels("ordinal", ("no", "yes"))
    assert labels.values == (1.0, 2.0)
    assert label_of(labels, 2.0) == "yes" and label_of(labels, 3.0) == "3"
    assert label_of(Scale("interval", (0.5, 1.0)), 0.5) == "0.5"
    assert _scale_text(Scale("ordinal", FIVE)) == "1..5"
    assert _scale_text(Scale("ordinal", (-2.0, -1.0, 0.0))) == "-2..0"
    assert _scale_text(Scale("ordinal", (1.0, 2.0))) == "1, 2"  # two values are listed
    assert _scale_text(Scale("ordinal", (1.0, 2.0, 4.0))) == "1, 2, 4"
    assert _scale_text(Scale("ordinal", (0.5, 1.5, 2.5))) == "0.5, 1.5, 2.5"


@pytest.mark.parametrize("value,band", [
    (None, "n/a"), (0.800, "reliable (≥ .800)"), (0.7999, "tentative (≥ .667)"),
    (0.667, "tentative (≥ .667)"), (0.6669, "unreliable (< .667)"), (-0.2, "unreliable (< .667)"),
])
def test_krippendorff_bands_at_their_boundaries(value, band):
    assert krippendorff_band(value) == band


@pytest.mark.parametrize("value,band", [
    (None, "n/a"), (-0.01, "poor (< 0)"), (0.0, "slight (≤ 0.20)"), (0.20, "slight (≤ 0.20)"),
    (0.2001, "fair (≤ 0.40)"), (0.40, "fair (≤ 0.40)"), (0.41, "moderate (≤ 0.60)"),
    (0.60, "moderate (≤ 0.60)"), (0.61, "substantial (≤ 0.80)"),
    (0.80, "substantial (≤ 0.80)"), (0.8001, "almost perfect (> 0.80)"),
])
def test_landis_koch_bands_at_their_boundaries(value, band):
    assert landis_koch_band(value) == band


@pytest.mark.parametrize("value,band", [
    (None, "n/a"), (0.4999, "poor (< .50)"), (0.50, "moderate (.50–.75)"),
    (0.7499, "moderate (.50–.75)"), (0.75, "good (.75–.90)"), (0.90, "good (.75–.90)"),
    (0.9001, "excellent (> .90)"),
])
def test_koo_li_bands_at_their_boundaries(value, band):
    assert koo_li_band(value) == band


def test_analyze_retest_block():
    # raters x and y rated items a-f; x re-rated a, b, c and y re-rated a, b (hidden repeats)
    rows = [(i, r, "empathy", s) for r, ss in (("x", [1, 2, 3, 4, 5, 3]),
                                                ("y", [2, 2, 3, 5, 5, 4]))
            for i, s in zip("abcdef", ss, strict=True)]
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    first = ratings[ratings["item_id"].isin(["a", "b", "c"]) & (ratings["rater"] == "x")
                    | ratings["item_id"].isin(["a", "b"]) & (ratings["rater"] == "y")]
    second = first.assign(score=[1, 3, 3, 4, 4])  # x: 1-1 2-3 3-3; y: 2-4 2-4
    res = analyze(ratings, {"empathy": Scale("ordinal", FIVE),
                            "safety": Scale("ordinal", FIVE)},
                  options=AnalysisOptions(B=0), repeats=(first, second)).to_dict()
    rt = res["dimensions"]["empathy"]["retest"]
    assert rt["n_pairs"] == 5
    assert rt["exact"] == pytest.approx(2 / 5) and rt["within1"] == pytest.approx(3 / 5)
    assert rt["raters"] == {"x": {"n": 3, "exact": 2 / 3, "within1": 1.0},
                            "y": {"n": 2, "exact": 0.0, "within1": 0.0}}
    assert rt["notes"] == [] and rt["qwk"] is not None and rt["alpha"] is not None
    # no repeats on a dimension: zero pairs and a note saying so; an empty repeats frame:
    # no block at all
    assert "safety" not in res["dimensions"] or "retest" not in res["dimensions"]["safety"]
    res2 = analyze(ratings.assign(dimension="safety"), {"safety": Scale("ordinal", FIVE)},
                   options=AnalysisOptions(B=0), repeats=(first, second)).to_dict()
    assert res2["dimensions"]["safety"]["retest"]["n_pairs"] == 0
    assert res2["dimensions"]["safety"]["retest"]["notes"] == [
        "retest: no repeated item was rated twice on this dimension"]
    empty = ratings.iloc[:0]
    res3 = analyze(ratings, {"empathy": Scale("ordinal", FIVE)},
                   options=AnalysisOptions(B=0), repeats=(empty, empty)).to_dict()
    assert "retest" not in res3["dimensions"]["empathy"]


def test_a_configuration_without_scores_is_listed_not_skipped():
    rng = np.random.default_rng(1)
    m = np.clip(np.rint(rng.normal(3, 1, 30)[:, None] + rng.normal(0, .7, (30, 3))), 1, 5)
    humans = Ratings(m, tuple(range(30)), ("a", "b", "c"))
    res = compare_dimension("empathy", humans,
                            {"ok": JudgeRun(np.clip(np.rint(m.mean(axis=1)), 1, 5)),
                             "none": JudgeRun(np.full(30, np.nan), n_unscored=30,
                                              n_judgments=30)},
                            "ordinal", FIVE, options=AnalysisOptions(B=50,
                                                                     min_shared_items=2)).to_dict()
    none = res["configs"]["none"]
    assert none["status"] == "no scored judgments" and none["n_items"] == 0
    assert none["qwk"] == none["mae"] == none["alpha_with_judge"] == {
        "value": None, "low": None, "high": None}
    assert none["unscored_rate"] == 1.0 and (none["n_unscored"], none["n_judgments"]) == (30, 30)
    assert none["verdict"]["outcome"] == "not_estimable"
    assert "no scored judgments on this dimension" in none["verdict"]["text"]
    assert "none: no scored judgments on empathy" in res["notes"]
    assert res["verdict"]["best"] == "ok" and res["n_items"] == 30
    empty = JudgeRun(np.full(30, np.nan))
    assert compare_dimension("e", humans, {"z": empty}, "ordinal", FIVE,
                             options=AnalysisOptions(B=0)).to_dict()[
        "configs"]["z"]["unscored_rate"] is None


def test_rater_model_as_json_has_no_nan():
    df = pd.DataFrame({"item": list("abcdefabcdef"), "rater": ["r1"] * 6 + ["r2"] * 6,
                       "score": [2, 3, 4, 3, 4, 5, 1, 2, 3, 2, 3, 4]})
    d = fit_rater_model(df, [1, 2, 3, 4, 5]).as_dict()
    assert d["estimable"] and d["fit_range"] == [0.5, 1.5]
    assert [r["rater"] for r in d["raters"]] == ["r1", "r2"]
    assert all(isinstance(v, (str, int, float, bool)) or v is None
               for row in d["raters"] + d["items"] for v in row.values())
    assert not any(isinstance(v, float) and np.isnan(v)
                   for row in d["raters"] + d["items"] for v in row.values())
    one = fit_rater_model(df.assign(score=3)).as_dict()
    assert one == {"estimable": False, "reason": "not estimable: every rating is in one "
                   "category, so there is no variation to separate raters from items"}


def test_a_judge_score_off_the_scale_is_named_once():
    ratings = pd.DataFrame([(i, r, "e", s) for i, ss in zip("abcdef", [(1, 2), (3, 3), (4, 5),
                                                                     (2, 2), (5, 4), (3, 4)],
                                                            strict=True)
                            for r, s in zip("xy", ss, strict=True)],
                           columns=["item_id", "rater", "dimension", "score"])
    judges = pd.DataFrame({"item_id": list("abcdef"), "judge": "J", "dimension": "e",
                           "score": [1, 9, 4, 2, 5, 3]})
    res = analyze(ratings, {"e": Scale("ordinal", FIVE)}, judges=judges,
                  options=AnalysisOptions(B=0, min_shared_items=2)).to_dict()
    notes = res["judges"]["J"]["e"]["notes"]
    assert "judge J, item b: score 9 is not on the scale 1..5; left out as unscored" in notes
    assert ("1 of 6 judgments are unscored (including the scores not on the scale) and left "
            "out") in notes
    assert res["judges"]["J"]["e"]["n_unscored"] == 1


def test_a_score_on_a_dimension_without_a_scale_does_not_stop_the_rest():
    """A dimension with no scale known gets NaN, unlisted, and the rows after it are still
    encoded."""
    scales = {"e": Scale("ordinal", FIVE)}
    df = pd.DataFrame({"dimension": ["e", "u", "e", "e"], "score": [2, 3, 4, 9]})
    out, off = encode_scores(df, scales)
    assert out["score"].tolist()[0] == 2.0 and out["score"].tolist()[2] == 4.0
    assert out["score"].isna().tolist() == [False, True, False, True]
    assert [(o.index, o.dimension, o.raw) for o in off] == [(3, "e", "9")]

"""One judge's block on one dimension, field by field (``judge_metrics``, ``verdict_for``,
``agreement_block``): which items each statistic is on, Bland–Altman, the confusion matrix
and the three alphas by hand or against the krippendorff package, the comparison with the
ceiling and the verdict with the options they were asked for, and the records of a judge
without scored judgments or without a leave-one-out pair."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import krippendorff
import numpy as np
import pytest
from scipy import stats

from analysis.alttest import alt_test
from analysis.ceiling import CeilingComparison, common_items, compare_with_ceiling, pooled_metrics
from analysis.judge_agreement import agreement_block, judge_metrics, verdict_for
from analysis.layout import Ratings
from analysis.options import AnalysisOptions
from analysis.serialize import Interval
from analysis.verdict import items_needed, replacement_verdict

VALUES = (1.0, 2.0, 3.0, 4.0, 5.0)
NAMES = ("ann", "bob", "cy", "dee")
OPT = AnalysisOptions(B=80, seed=5, ci=0.9, min_shared_items=3, alpha_min=0.99)


def _study():
    """Items 0-39: ann, bob and cy (noisy around a latent score); 40-41: ann and dee (dee
    shares 2 items, fewer than 3: left out of the ceiling); 42: ann alone, scored by the
    judge; 43: scored by the judge, rated by nobody; 44: nothing; 45: ann alone, unscored.
    The judge leaves item 5 unscored and scores 2.0 (off nothing) elsewhere near the latent
    score."""
    rng = np.random.default_rng(21)
    latent = rng.normal(3, 1.0, 40)
    m = np.full((46, 4), np.nan)
    m[:40, :3] = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.8, (40, 3))), 1, 5)
    m[40] = [4, np.nan, np.nan, 2]
    m[41] = [2, np.nan, np.nan, 2]
    m[42, 0] = 3
    m[45, 0] = 4
    judge = np.full(46, np.nan)
    judge[:40] = np.clip(np.rint(latent + rng.normal(0, 0.5, 40)), 1, 5)
    judge[5] = np.nan
    judge[40:44] = [3, 2, 5, 1]
    humans = Ratings(m, tuple(f"i{k}" for k in range(46)), NAMES)
    return humans, judge


def test_a_judge_block_field_by_field():
    humans, judge = _study()
    m = humans.matrix
    samples = np.column_stack([judge, np.where(np.arange(46) % 3 == 0, judge - 1, judge)])
    jm = judge_metrics(humans, [None if np.isnan(v) else v for v in judge], "ordinal", VALUES,
                       samples=samples, options=OPT)
    items = common_items(m, [judge], min_shared_items=3)
    pairs = items.pairs
    # 39 items rated by ann, bob and cy and scored (5 is not): 3 pairs each; dee is left out
    assert (pairs.n_items, pairs.n_pairs, pairs.left_out) == (39, 117, (3,))
    # scored and rated by someone: 39 + items 40, 41, 42
    assert items.rows.sum() == 42 and jm.items.rows.tolist() == items.rows.tolist()
    met = jm.metrics
    ref = pooled_metrics(pairs, judge)
    for k in ("qwk", "linear_kappa", "pearson", "spearman", "kendall_tau_b", "mae", "rmse",
              "bias", "exact", "within1", "n_items", "n_pairs"):
        assert met[k] == pytest.approx(ref[k], abs=1e-12), k
    assert met["n_scored_items"] == 42
    # Bland–Altman: the judge minus the mean of every human on each scored item a human
    # rated (dee too, and item 42 with ann alone): 42 items
    ok = ~np.isnan(judge) & (np.sum(~np.isnan(m), axis=1) > 0)
    d = judge[ok] - np.nanmean(m[ok], axis=1)
    bias, sd = d.mean(), d.std(ddof=1)
    assert met["bland_altman"] == {"bias": pytest.approx(bias), "n_items": 42,
                                   "low": pytest.approx(bias - 1.96 * sd),
                                   "high": pytest.approx(bias + 1.96 * sd),
                                   "against": "per-item mean of all humans"}
    # the three alphas against the krippendorff package (coders × units)
    kw = {"level_of_measurement": "ordinal", "value_domain": list(VALUES)}
    assert met["alpha_humans"] == pytest.approx(
        krippendorff.alpha(reliability_data=m.T, **kw), abs=1e-9)
    assert met["alpha_with_judge"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([m.T, judge]), **kw), abs=1e-9)
    assert met["self_consistency_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=samples.T, **kw), abs=1e-9)
    # the alternative annotator test with the raters' names, neg_rmse on an ordinal scale
    alt = alt_test(m, judge, scoring="neg_rmse", epsilon=0.2, human_names=NAMES)
    assert jm.alt == alt and set(jm.alt.p_values) == {"ann", "bob", "cy"}
    # the comparison with the ceiling at the options' B, seed and ci (90 %)
    cmp = compare_with_ceiling(pairs, judge, B=80, seed=5, ci=0.9)
    assert jm.comparison == cmp
    assert cmp.diff.low != compare_with_ceiling(pairs, judge, B=80, seed=5).diff.low
    # the verdict: the largest share one human rated of the 39 items with a judge score and
    # two or more ratings is 39/39; the humans' alpha is below alpha_min = 0.99
    verdict = replacement_verdict(cmp, alt, margin=0.05, ci=0.9, max_human_share=1.0,
                                  humans_alpha=met["alpha_humans"], alpha_min=0.99)
    assert jm.verdict == verdict and verdict.humans_unreliable == met["alpha_humans"]
    assert "alternative annotator test" in verdict.text and "not run" not in verdict.text
    # one judge-scored item (5 is missing) of those a human rated; 43 and 44 nobody rated
    assert jm.notes == ["2 human-rated items have no judge score (unscored or missing)",
                        *alt.notes]
    # the confusion matrix: the lower median of the humans against the judge, on the items
    # scored and rated (42), as integers
    med = [sorted(v for v in row if not math.isnan(v))[(len([v for v in row
                                                           if not math.isnan(v)]) - 1) // 2]
           for row in m[ok]]
    want = np.zeros((5, 5), int)
    for h, j in zip(med, judge[ok], strict=True):
        want[int(h) - 1, int(j) - 1] += 1
    assert jm.confusion == {"values": list(VALUES), "rows": "human median (lower)",
                            "columns": "judge", "matrix": want.tolist()}
    assert want.sum() == 42
    assert json.dumps(jm.confusion["matrix"]) == json.dumps(want.tolist())  # ints, not 1.0
    block = agreement_block(jm, n_judgments=44, n_unscored=2, notes=["first"])
    assert (block.n_judgments, block.n_unscored, block.status) == (44, 2, None)
    assert block.notes == ("first", *jm.notes)
    assert block.items == "the items the judge scored that two or more humans rated"
    assert block.self_consistency_alpha == met["self_consistency_alpha"]
    # defaults: no judgments counted, no items named when the metrics carry no item set
    plain = agreement_block(replace(jm, items=None))
    assert (plain.n_judgments, plain.n_unscored, plain.items) == (0, 0, None)
    one = agreement_block(judge_metrics(humans, judge, "ordinal", VALUES, options=OPT))
    assert one.self_consistency_alpha is None
    assert "self_consistency_alpha: one sample per item" in one.notes


def test_a_nominal_scale_is_tested_on_accuracy_and_off_scale_scores_stay_out():
    humans, judge = _study()
    odd = judge.copy()
    odd[0] = 6.0  # not one of the values: not in the confusion matrix
    jm = judge_metrics(humans, odd, "nominal", VALUES, options=AnalysisOptions(B=0))
    assert jm.alt.scoring == "accuracy"
    assert np.sum(jm.confusion["matrix"]) == 41


def test_a_judge_without_scored_judgments():
    humans, _ = _study()
    m = humans.matrix
    judge = np.full(46, np.nan)
    judge[43] = 3.0  # only an item nobody rated
    jm = judge_metrics(humans, judge, "interval", VALUES, options=OPT)
    kw = {"level_of_measurement": "interval", "value_domain": list(VALUES)}
    assert jm.metrics == {
        **{k: None for k in ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "bias",
                             "qwk", "linear_kappa", "exact", "within1")},
        "n_items": 0, "n_pairs": 0, "n_scored_items": 0, "bland_altman": None,
        "alpha_humans": pytest.approx(krippendorff.alpha(reliability_data=m.T, **kw)),
        "alpha_with_judge": None, "self_consistency_alpha": None}
    assert (jm.alt, jm.confusion, jm.comparison) == (None, None, None)
    assert jm.verdict.outcome == "not_estimable"
    assert jm.verdict.reasons == ("no scored judgments on items that two or more humans "
                                  "rated",)
    assert jm.items is not None and jm.items.rows.sum() == 0
    assert jm.notes == ["no scored judgments on the human-rated items: nothing to compare"]
    block = agreement_block(jm)
    assert block.status == "no scored judgments"


def test_a_judge_that_scored_only_items_one_human_rated():
    """Scored items, but none with a second rating: no leave-one-out pair, no comparison,
    and the block has no status (it has scored judgments)."""
    humans, _ = _study()
    judge = np.full(46, np.nan)
    judge[[42, 45]] = [3.0, 2.0]
    jm = judge_metrics(humans, judge, "ordinal", VALUES, options=OPT)
    assert (jm.metrics["n_items"], jm.metrics["n_pairs"], jm.metrics["n_scored_items"]) == \
        (0, 0, 2)
    assert jm.comparison is None
    assert "no judge-scored item has two or more human ratings: the leave-one-out " \
           "comparison is not possible" in jm.notes
    assert jm.metrics["bland_altman"]["n_items"] == 2
    block = agreement_block(jm)
    assert block.status is None and block.n_scored_items == 2


def _comparison(n, d, lo, hi, sd):
    return CeilingComparison(Interval(0.6), Interval(0.6 - d), Interval(d, lo, hi), sd, n,
                             3 * n, 100, 0)


# who rated which item (1) and which items the judge scored: the items with a score and two or
# more ratings are 0, 1, 2, 3 and 5, and the most any one human rated of them is 4 of 5
_WHO = [[1, 1, 1, 0], [1, 0, 0, 1], [0, 1, 1, 1], [1, 0, 0, 1], [1, 0, 0, 0], [1, 0, 1, 1],
        [0, 0, 0, 0], [0, 0, 0, 1], [1, 0, 0, 1], [1, 0, 0, 0]]
_SCORED = [1, 1, 1, 1, 0, 1, 1, 1, 0, 1]


def test_verdict_for_names_why_there_is_none_and_projects_items():
    m = np.where(np.array(_WHO) == 1, 3.0, np.nan)
    judge = np.where(np.array(_SCORED) == 1, 2.0, np.nan)
    opt = AnalysisOptions(B=100, ci=0.9, margin=0.05, min_units=5, alpha_min=0.8)
    v = verdict_for(None, None, m, judge, options=opt)
    assert v.reasons == ("no scored judgments on items that two or more humans rated",)
    v = verdict_for(_comparison(0, 0.0, -0.1, 0.1, 0.05), None, m, judge, options=opt)
    assert v.reasons == ("no scored judgments on items that two or more humans rated",)
    v = verdict_for(_comparison(4, 0.0, -0.1, 0.1, 0.05), None, m, judge, options=opt)
    assert v.reasons == ("only 4 items have a judge score and two or more human ratings "
                         "(minimum 5)",)
    # a CI across the margin, the alternative annotator test not run: the items needed are
    # the larger of the projection n (z sd / |d + margin|)^2 at ci 0.9 and 30 / (the largest
    # share one human rated)
    z = stats.norm.ppf(0.95)
    v = verdict_for(_comparison(40, -0.04, -0.1, 0.02, 0.03), None, m, judge, options=opt)
    assert v.outcome == "not_enough_evidence"
    assert v.items_needed == math.ceil(40 * (z * 0.03 / 0.01) ** 2) == 974  # 1,383 at 0.95
    # close to settled (5 items by the projection): the share decides, 4/5 -> ceil(37.5)
    near = _comparison(40, 0.0, -0.06, 0.06, 0.01)
    assert items_needed(40, 0.0, 0.01, 0.05, 0.9) == 5
    assert verdict_for(near, None, m, judge, options=opt).items_needed == 38
    # the humans' alpha below alpha_min: said, and kept with the verdict
    v = verdict_for(near, None, m, judge, options=opt, humans_alpha=0.5)
    assert v.humans_unreliable == 0.5 and "do not agree reliably" in v.reasons[-1]
    v = verdict_for(near, None, m, judge, options=opt, humans_alpha=0.85)
    assert v.humans_unreliable is None


def test_the_one_human_per_item_block_uses_the_options_and_is_none_otherwise():
    """No item has two humans: the block against the single human is the one
    single_human_agreement gives with the analysis' B, seed, level and minimum of items (none
    of them its defaults); a study with leave-one-out pairs has no such block (None); the
    confusion matrix names its axes."""
    from analysis.single_human import single_human_agreement

    rng = np.random.default_rng(8)
    truth = rng.integers(1, 6, 24).astype(float)
    m = np.full((24, 3), np.nan)
    m[np.arange(24), np.arange(24) % 3] = truth
    judge = np.clip(truth + rng.integers(-1, 2, 24), 1, 5)
    humans = Ratings(m, tuple(f"i{k}" for k in range(24)), ("a", "b", "c"))
    opt = AnalysisOptions(B=60, seed=11, ci=0.8, min_units=7)
    jm = judge_metrics(humans, judge, "ordinal", VALUES, options=opt)
    want = single_human_agreement(m, judge, VALUES, B=60, seed=11, ci=0.8, min_items=7)
    assert want is not None and jm.single_human == want
    assert want != single_human_agreement(m, judge, VALUES)
    # six items: enough at the default minimum of 5, not at the analysis' 7
    six = Ratings(m[:6], humans.items[:6], humans.raters)
    jm6 = judge_metrics(six, judge[:6], "ordinal", VALUES, options=opt)
    want6 = single_human_agreement(m[:6], judge[:6], VALUES, B=60, seed=11, ci=0.8,
                                   min_items=7)
    assert jm6.single_human == want6
    assert want6 != single_human_agreement(m[:6], judge[:6], VALUES, B=60, seed=11, ci=0.8)
    with_pairs = judge_metrics(*_study(), "ordinal", VALUES, options=OPT)
    assert with_pairs.single_human is None
    conf = agreement_block(with_pairs).confusion
    assert (conf.rows, conf.columns) == ("human median (lower)", "judge")

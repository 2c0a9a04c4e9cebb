"""One definition of the items a comparison with the humans is on (analysis.ceiling.
common_items): the human ceiling, a judge, the calibration of configurations and the metrics
comparison take their items and leave-one-out pairs from it, and where two of them must use
different items (α with the judge in `h2h analyze` and in `h2h calibrate`) each says which."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest

from analysis.analyze import analyze
from analysis.calibration import JudgeRun, compare_dimension
from analysis.ceiling import common_items, human_ceiling, loo_pairs
from analysis.judge_agreement import judge_metrics
from analysis.layout import Ratings
from analysis.options import AnalysisOptions
from analysis.refmetrics.compare import Scored, metric_dimension
from analysis.scales import Scale

VALUES = [1.0, 2.0, 3.0, 4.0, 5.0]
nan = np.nan
#        h1   h2   h3
M = np.array([[1, 2, nan],
              [2, 2, 3],
              [4, nan, nan],   # one human: in a set of "rated" items, never in a pair
              [5, 4, 4],
              [3, nan, 2],
              [nan, 1, 1]], float)


def test_the_three_kinds_of_item_set():
    ceiling = common_items(M, min_humans=2)
    assert ceiling.basis == "rated_by_two" and ceiling.rows.tolist() == [
        True, True, False, True, True, True]
    judge = np.array([1, nan, 4, 5, 3, 1.0])
    one = common_items(M, [judge])
    assert one.basis == "scored" and one.rows.tolist() == [True, False, True, True, True, True]
    assert one.label == "the items the judge scored that two or more humans rated"
    # the pairs: items with two or more humans among the scored ones (item 2 has one human)
    assert sorted(set(one.pairs.item.tolist())) == [0, 3, 4, 5]
    other = np.array([2, 2, nan, 5, nan, 1.0])
    both = common_items(M, [judge, other])
    assert both.basis == "scored_by_all" and both.rows.tolist() == [
        True, False, False, True, False, True]
    # the humans left out for too few shared items are chosen on all items, then restricted
    few = common_items(M, [judge], min_shared_items=3)
    assert few.pairs.left_out == loo_pairs(M, min_shared_items=3).left_out


def test_the_ceiling_a_judge_the_calibration_and_the_metrics_use_the_same_pairs():
    rng = np.random.default_rng(5)
    lat = rng.integers(1, 6, 40).astype(float)
    m = np.clip(lat[:, None] + rng.integers(-1, 2, (40, 4)), 1, 5)
    m[rng.random(m.shape) < 0.3] = nan
    judge = np.clip(lat + rng.integers(-1, 2, 40), 1, 5)
    judge[:7] = nan
    humans = Ratings(m, tuple(range(40)), ("a", "b", "c", "d"))
    opt = AnalysisOptions(B=0, min_shared_items=2)
    want = common_items(m, [judge], min_shared_items=2).pairs
    jm = judge_metrics(humans, judge, "ordinal", VALUES, options=opt)
    assert jm.items.pairs.n_pairs == want.n_pairs == jm.comparison.n_pairs
    cal = compare_dimension("d", humans, {"j": JudgeRun(judge)}, "ordinal", VALUES,
                            options=opt)
    assert cal.human_ceiling.n_pairs == want.n_pairs
    met = metric_dimension(humans, [Scored("j", "metric", judge)], options=opt)
    assert met.n_pairs == want.n_pairs
    # and the human ceiling's own set: every item two or more humans rated
    assert human_ceiling(m, min_shared_items=2)["n_pairs"] == \
        common_items(m, min_shared_items=2, min_humans=2).pairs.n_pairs


def test_alpha_with_the_judge_differs_by_its_items_and_each_result_says_which():
    """The case behind "α with judge 0.693 in analyze, 0.456 in calibrate": a judge that
    scored half the items. `h2h analyze` adds it as one more rater on every item a human
    rated; `h2h calibrate` compares configurations on the items all of them scored."""
    rng = np.random.default_rng(2)
    lat = rng.integers(1, 6, 30).astype(float)
    m = np.clip(lat[:, None] + rng.integers(-1, 2, (30, 3)), 1, 5)
    judge = np.where(np.arange(30) < 15, np.clip(lat + rng.integers(-2, 3, 30), 1, 5), nan)
    ratings = pd.DataFrame([(f"i{i}", f"h{h}", "e", m[i, h]) for i in range(30)
                            for h in range(3)], columns=["item_id", "rater", "dimension",
                                                         "score"])
    judges = pd.DataFrame({"item_id": [f"i{i}" for i in range(30)], "judge": "J",
                           "dimension": "e", "score": judge})
    opt = AnalysisOptions(B=0, min_shared_items=2)
    res = analyze(ratings, {"e": Scale("ordinal", tuple(VALUES))}, judges=judges, options=opt)
    block = res.judge("J", "e")
    kw = {"level_of_measurement": "ordinal", "value_domain": VALUES}
    everywhere = krippendorff.alpha(np.column_stack([m, judge]).T, **kw)
    scored = krippendorff.alpha(np.column_stack([m, judge])[:15].T, **kw)
    assert block.alpha_with_judge == pytest.approx(everywhere, abs=1e-12)
    assert block.items == "the items the judge scored that two or more humans rated"
    humans = Ratings(m, tuple(f"i{i}" for i in range(30)), ("h0", "h1", "h2"))
    cal = compare_dimension("e", humans, {"J": JudgeRun(judge)}, "ordinal", VALUES,
                            options=opt)
    assert cal.configs["J"].alpha_with_judge.value == pytest.approx(scored, abs=1e-12)
    assert cal.items == "the items every compared judge or metric scored"
    assert abs(everywhere - scored) > 0.01  # the two really differ on this case
    # the items are not in the JSON: its layout is fixed
    assert "items" not in block.to_dict() and "items" not in cal.to_dict()

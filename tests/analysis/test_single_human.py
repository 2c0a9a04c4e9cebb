"""A judge against one human per item (the usual budget design): the agreement that exists is
reported, marked "against one human per item; no ceiling"; the ceiling and the alternative
annotator test still say not estimable and why."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from analysis.analyze import AnalysisOptions, analyze
from analysis.scales import Scale
from analysis.single_human import single_human_agreement

SCALE = {"empathy": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))}


def _study(n=60, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(3, 1, n)
    human = np.clip(np.rint(q + rng.normal(0, 0.5, n)), 1, 5)
    judge = np.clip(np.rint(q + 0.4 + rng.normal(0, 0.6, n)), 1, 5)
    raters = [f"r{i % 4}" for i in range(n)]  # four raters, each item rated by one
    ratings = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)], "rater": raters,
                            "dimension": "empathy", "score": human})
    judges = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)], "judge": "j",
                           "dimension": "empathy", "score": judge})
    return ratings, judges, human, judge


def test_point_values_match_scipy_and_sklearn():
    _, _, human, judge = _study()
    r = single_human_agreement(human[:, None], judge, [1, 2, 3, 4, 5], B=0)
    assert r["against"] == "against one human per item; no ceiling" and r["n_items"] == 60
    assert r["pearson"]["value"] == pytest.approx(stats.pearsonr(judge, human).statistic)
    assert r["spearman"]["value"] == pytest.approx(stats.spearmanr(judge, human).statistic)
    assert r["kendall_tau_b"]["value"] == pytest.approx(
        stats.kendalltau(judge, human, variant="b").statistic)
    assert r["mae"]["value"] == pytest.approx(np.mean(np.abs(judge - human)))
    assert r["rmse"]["value"] == pytest.approx(np.sqrt(np.mean((judge - human) ** 2)))
    # QWK with weights on the values on the 1..5 scale is sklearn's quadratic kappa
    assert r["qwk"]["value"] == pytest.approx(
        cohen_kappa_score(judge, human, weights="quadratic", labels=[1, 2, 3, 4, 5]))
    # kappa is the unweighted one (not the quadratic, not the linear)
    assert r["kappa"]["value"] == pytest.approx(cohen_kappa_score(judge, human,
                                                                  labels=[1, 2, 3, 4, 5]))
    assert r["kappa"]["value"] != pytest.approx(r["qwk"]["value"], abs=0.05)
    assert r["mae"]["low"] is None  # B = 0: no CI


def test_each_statistic_has_a_bootstrap_ci_around_it():
    _, _, human, judge = _study()
    r = single_human_agreement(human[:, None], judge, [1, 2, 3, 4, 5], B=300, seed=2)
    for k in ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "qwk", "kappa"):
        v = r[k]
        assert v["low"] < v["value"] < v["high"], k
    again = single_human_agreement(human[:, None], judge, [1, 2, 3, 4, 5], B=300, seed=2)
    assert again == r  # seeded


def test_analyze_reports_it_where_the_ceiling_is_not_estimable():
    ratings, judges, _, _ = _study()
    analysis = analyze(ratings, SCALE, judges=judges, options=AnalysisOptions(B=200, seed=1))
    typed = analysis.judge("j", "empathy").single_human
    assert typed.n_items == 60 and typed.qwk.value is not None
    res = analysis.to_dict()  # the JSON of h2h analyze --json
    block = res["judges"]["j"]["empathy"]
    assert list(block)[-3:] == ["single_human", "status", "notes"] or \
        list(block)[-2:] == ["single_human", "notes"]
    assert block["qwk"] is None and block["vs_ceiling"] is None  # no leave-one-out pairs
    s = block["single_human"]
    assert s["against"] == "against one human per item; no ceiling"
    assert s["n_items"] == 60 and s["qwk"]["value"] is not None and s["qwk"]["low"] is not None
    notes = " ".join(block["notes"])
    assert "leave-one-out comparison is not possible" in notes
    assert "single_human" in notes
    # the verdict, the ceiling and the alternative annotator test: not estimable, with why
    assert block["verdict"]["outcome"] == "not_estimable"
    assert "two or more humans" in block["verdict"]["text"]
    assert res["human_ceiling"]["empathy"]["qwk"] is None
    assert any("only 0 items rated by two or more humans" in n
               for n in res["human_ceiling"]["empathy"]["notes"])
    alt = block["alt_test"]
    assert alt["passed"] is None and alt["items_dropped"] == 60 and alt["humans_tested"] == 0


def test_no_single_human_block_when_items_have_two_humans():
    ratings, judges, human, _ = _study()
    second = ratings.assign(rater="r9", score=np.clip(human + 1, 1, 5))
    res = analyze(pd.concat([ratings, second]), SCALE, judges=judges,
                  options=AnalysisOptions(B=0))
    assert res.judge("j", "empathy").single_human is None
    assert "single_human" not in res.to_dict()["judges"]["j"]["empathy"]


def test_the_tables_mark_it_against_one_human_with_no_ceiling():
    import io

    from rich.console import Console

    from analysis.cli_tables import print_tables

    ratings, judges, _, _ = _study()
    res = analyze(ratings, SCALE, judges=judges, options=AnalysisOptions(B=100))
    buf = io.StringIO()
    print_tables(res, Console(file=buf, width=200, highlight=False))
    text = buf.getvalue()
    assert "Judges against one human per item; no ceiling" in text
    assert "Kendall τ-b" in text and "κ" in text


def test_humans_left_out_for_too_few_shared_items_is_the_reason_given():
    """17 items with two humans each, every human on fewer than 10 of them with another
    (a third of the demo study, a user trial): the verdict said "no scored judgments on
    items that two or more humans rated" and the ceiling "only 0 items rated by two or more
    humans", while 17 such items were there and scored."""
    rng = np.random.default_rng(4)
    rows, judge_rows = [], []
    for i in range(17):
        q = rng.normal(3, 1)
        for r in (i % 6, (i + 1) % 6):  # two humans an item, 5 or 6 items each
            rows.append((f"i{i}", f"r{r}", "empathy", float(np.clip(np.rint(q), 1, 5))))
        judge_rows.append((f"i{i}", "j", "empathy", float(np.clip(np.rint(q + 0.3), 1, 5))))
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    assert ratings.groupby("rater").size().max() < 10  # every human under the minimum
    judges = pd.DataFrame(judge_rows, columns=["item_id", "judge", "dimension", "score"])
    res = analyze(ratings, SCALE, judges=judges,
                  options=AnalysisOptions(B=50, seed=1, min_shared_items=10)).to_dict()
    block = res["judges"]["j"]["empathy"]
    assert block["n_items"] == 0 and block["n_scored_items"] == 17
    reason = ("every human rated fewer than 10 items together with another human (the "
              "minimum for the leave-one-out comparison), so the 17 judge-scored items with "
              "two or more human ratings cannot be compared")
    assert block["verdict"]["reasons"] == [reason] and reason in block["notes"]
    assert not any("no judge-scored item has two" in n for n in block["notes"])
    ceiling = " ".join(res["human_ceiling"]["empathy"]["notes"])
    assert "of the 17 items rated by two or more humans 0 remain once the humans left out " \
        "are (minimum 5)" in ceiling and "only 0 items" not in ceiling


def test_a_ceiling_on_too_few_items_after_humans_are_left_out_has_no_numbers():
    """Humans a and b share 3 items (kept: at least 2 shared), c and d share 1 (left out):
    4 items have two or more humans, 3 remain, fewer than the 5 a ceiling needs. The ceiling
    is not estimable, with the reason and no number beside it."""
    rows = [(f"i{k}", h, "empathy", float(s)) for k, (x, y) in enumerate([(2, 3), (4, 4), (5, 4)])
            for h, s in (("a", x), ("b", y))]
    rows += [("i3", "c", "empathy", 1.0), ("i3", "d", "empathy", 2.0)]
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    res = analyze(ratings, SCALE, options=AnalysisOptions(B=50, seed=1, min_shared_items=2,
                                                          min_units=5)).to_dict()
    ceiling = res["human_ceiling"]["empathy"]
    assert "of the 4 items rated by two or more humans 3 remain once the humans left out " \
        "are (minimum 5)" in " ".join(ceiling["notes"])
    assert ceiling["qwk"] is None and ceiling["mae"] is None
    assert ceiling["qwk_ci"] == {"low": None, "high": None}

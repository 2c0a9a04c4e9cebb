"""The metrics comparison from long frames, in process (``metric_comparison``, the block of
``h2h analyze --json`` and ``h2h calibrate --json``): which dimensions get a block, which items
and humans every row is on, each row's correlations and CIs against the leave-one-out pairs
written out and scipy, the system level against :func:`system_agreement` on means taken by
hand, and the records of the blocks that are not estimable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.layout import Ratings
from analysis.options import AnalysisOptions
from analysis.refmetrics.compare import Scored, metric_comparison, metric_dimension
from analysis.refmetrics.system import system_agreement
from analysis.resample import item_weights
from analysis.scales import Scale

SCIPY = {"pearson": lambda x, y: stats.pearsonr(x, y).statistic,
         "spearman": lambda x, y: stats.spearmanr(x, y).statistic,
         "kendall_tau_b": lambda x, y: stats.kendalltau(x, y, variant="b").statistic}
ITEMS = [f"i{k:02d}" for k in range(13)]
H1 = [1, 2, 3, 4, 5, 2, 3, 4, 1, 5, 3, 2, 4]
H2 = [2, 2, 4, 3, 5, 1, 3, 5, 2, 4, 3, 3]          # i00..i11
H3 = [3, 1, 3, 4]                                  # i00..i03: 4 items, fewer than 5
BLEU = [10, 25, 31, 38, 52, 14, 30, 47, 12, 49, 33, None, 40]   # no score on i11
CHRF = [0.2, 0.1, 0.5, 0.6, 0.9, 0.3, 0.4, 0.7, 0.2, 0.8, 0.5, 0.3, 0.6]
J1 = [(1, 2), (2, 2), (3, 4), (4, 4), (5, 5), (2, 3), (3, 3), (4, 5), (1, 1), (5, 5), (3, 4),
      (2, 2), (4, 4)]                              # two samples; the lower median is the min
MODEL = ["A"] * 4 + ["B"] * 4 + ["C"] * 5
SCENARIO = [f"s{k % 4}" for k in range(13)]
OPT = AnalysisOptions(B=60, seed=7, ci=0.9, min_shared_items=5)


# each row's score of an item: the judge's lower median of its two samples, the metrics as given
PER_ITEM = {"j1": np.array([min(s) for s in J1], float),
            "bleu": np.array([np.nan if s is None else s for s in BLEU], float),
            "chrf": np.array(CHRF)}


def _system_ref(left_out: tuple[int, ...]):
    """The system level by hand on every item but ``left_out``: the humans' score of an item
    the mean of all its ratings (h3's too); (those scores, system_agreement on them)."""
    kept = [k for k in range(13) if k not in left_out]
    human = np.array([np.mean([h[k] for h in (H1, H2, H3) if k < len(h)]) for k in kept])
    ref = system_agreement(human, {n: PER_ITEM[n][kept] for n in ("j1", "bleu", "chrf")},
                           np.array(MODEL)[kept], np.array(SCENARIO)[kept], B=60, seed=7,
                           ci=0.9)
    return human, ref


def _frames():
    rows = [(i, "h1", "empathy", s) for i, s in zip(ITEMS, H1, strict=True)]
    rows += [(i, "h2", "empathy", s) for i, s in zip(ITEMS, H2, strict=False)]
    rows += [(i, "h3", "empathy", s) for i, s in zip(ITEMS, H3, strict=False)]
    rows += [(i, r, "tone", s) for i in ITEMS[:6] for r, s in (("h1", 1), ("h2", 2))]
    rows += [(i, "h1", "solo", 3) for i in ITEMS]  # one rater: no block
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    metrics = pd.DataFrame(
        [(i, "bleu", s) for i, s in zip(ITEMS, BLEU, strict=True) if s is not None]
        + [(i, "chrf", s) for i, s in zip(ITEMS, CHRF, strict=True)]
        + [("i12", "ghost", 1.0), ("i12", "zz_ghost", 2.0)],  # only on a one-human item
        columns=["item_id", "metric", "score"])
    judges = pd.DataFrame([(i, "j1", "empathy", s, k) for i, ss in zip(ITEMS, J1, strict=True)
                           for k, s in enumerate(ss)],
                          columns=["item_id", "judge", "dimension", "score", "sample"])
    items = pd.DataFrame({"item_id": ITEMS, "model": MODEL, "scenario": SCENARIO})
    scales = {"empathy": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0)),
              "tone": Scale.of_labels("nominal", ("cold", "warm", "hot")),
              "solo": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))}
    return ratings, scales, metrics, judges, items


def _pairs():
    """The pooled leave-one-out pairs by hand: h3 is left out (4 shared items, minimum 5);
    i11 (no BLEU) and i12 (one human) are not common; on i00..i10 h1's score is paired with
    h2's and h2's with h1's."""
    used = list(range(11))
    item = np.array(used + used)
    x = np.array([H1[i] for i in used] + [H2[i] for i in used], float)
    c = np.array([H2[i] for i in used] + [H1[i] for i in used], float)
    return item, x, c


def _ci(scores_of_item, item, c, w, ci=0.9):
    """Percentile CIs of the three coefficients over resamples written out (pairs of an item
    drawn k times appear k times)."""
    boots = {k: [] for k in SCIPY}
    for row in w:
        idx = np.concatenate([np.flatnonzero(item == i) for i in range(11)
                              for _ in range(int(row[i]))])
        x = scores_of_item(idx)
        for k, f in SCIPY.items():
            boots[k].append(f(x, c[idx]))
    lo, hi = (1 - ci) / 2, 1 - (1 - ci) / 2
    return {k: np.array(v) for k, v in boots.items()}, (lo, hi)


def test_every_row_against_the_pairs_written_out_and_the_system_level_by_hand():
    ratings, scales, metrics, judges, items = _frames()
    res = metric_comparison(ratings, scales, metrics, judges=judges, items=items, options=OPT)
    assert list(res.dimensions) == ["empathy", "tone"] and res.notes == ()
    emp = res.dimensions["empathy"]
    assert (emp.status, emp.n_items, emp.n_pairs, emp.n_humans) == ("ok", 11, 22, 2)
    assert (emp.B, emp.seed, emp.level) == (60, 7, 0.9)
    assert emp.notes == (
        "ghost: no score on items rated by two or more humans",
        "zz_ghost: no score on items rated by two or more humans",
        "1 items rated by two or more humans lack a score from some judge or metric and are "
        "left out, so every row is on the same items",
        "1 humans left out (fewer than 5 items rated together with another human)")
    assert [(r.name, r.kind, r.status) for r in emp.rows] == [
        ("human ceiling", "ceiling", "ok"), ("j1", "judge", "ok"), ("bleu", "metric", "ok"),
        ("chrf", "metric", "ok"), ("ghost", "metric", "no scores"),
        ("zz_ghost", "metric", "no scores")]
    item, x_h, c = _pairs()
    w = item_weights(11, 60, 7)
    ceiling_boots, (lo, hi) = _ci(lambda idx: x_h[idx], item, c, w)
    for row in emp.rows[:4]:
        x_of = (lambda idx: x_h[idx]) if row.kind == "ceiling" else \
            (lambda idx, s=PER_ITEM[row.name]: s[item[idx]])
        boots, _ = _ci(x_of, item, c, w)
        x = x_of(np.arange(22))
        for k, f in SCIPY.items():
            got = getattr(row, k)
            assert got.value == pytest.approx(f(x, c), abs=1e-12), (row.name, k)
            ok = np.isfinite(boots[k])
            assert (got.low, got.high) == pytest.approx(
                tuple(np.quantile(boots[k][ok], [lo, hi])), abs=1e-12), (row.name, k)
            if row.kind == "ceiling":
                continue
            diff = boots[k] - ceiling_boots[k]
            ok = np.isfinite(diff)
            minus = row.minus_ceiling[k]
            assert minus.value == pytest.approx(f(x, c) - f(x_h, c), abs=1e-12)
            assert (minus.low, minus.high) == pytest.approx(
                tuple(np.quantile(diff[ok], [lo, hi])), abs=1e-12)
    assert emp.rows[0].minus_ceiling is None and "minus_ceiling" not in emp.rows[0].to_dict()
    for row in emp.rows[4:]:
        assert row.spearman.value is None and row.minus_ceiling is None
    # the system level: every item a human rated and every row scored (i11 has no BLEU),
    # the humans' score of an item the mean of all its ratings (h3's too)
    human, ref = _system_ref(left_out=(11,))
    assert emp.system.to_dict() == {**ref.to_dict(), "kinds": {"j1": "judge", "bleu": "metric",
                                                               "chrf": "metric"}}
    assert emp.system.human_means == pytest.approx(
        {"A": np.mean(human[:4]), "B": np.mean(human[4:8]), "C": np.mean(human[8:])})
    assert emp.system.n_items == 12 and emp.system.rows["bleu"].kendall_tau_b.low is not None
    # a nominal scale of three categories: no correlations, and the block says why
    tone = res.dimensions["tone"].to_dict()
    assert tone == {"status": "not estimable", "n_items": 0, "n_pairs": 0, "B": 60, "seed": 7,
                    "level": 0.9, "rows": [],
                    "notes": ["the scale is nominal with three or more categories: "
                              "correlations with an order do not apply"], "system": None}


def test_without_models_there_is_no_system_level_and_a_note_says_so():
    ratings, scales, metrics, judges, items = _frames()
    for it in (None, items.drop(columns="scenario")):
        res = metric_comparison(ratings, scales, metrics, judges=None, items=it,
                                options=AnalysisOptions(B=0, min_shared_items=5))
        assert res.notes == ("system level not computed: the companion model of each item "
                             "is not known (it comes from the study, or a model column)",)
        emp = res.dimensions["empathy"]
        assert emp.system is None and emp.to_dict()["system"] is None
        assert [r.name for r in emp.rows] == ["human ceiling", "bleu", "chrf", "ghost",
                                              "zz_ghost"]
        assert emp.rows[1].spearman.low is None  # B = 0: no intervals


def _humans(m) -> Ratings:
    m = np.asarray(m, float)
    return Ratings(m, tuple(f"i{k}" for k in range(m.shape[0])),
                   tuple(f"h{j}" for j in range(m.shape[1])))


def test_the_records_of_blocks_that_are_not_estimable():
    humans = _humans([[1, 2], [2, 2], [3, 4], [4, 3]])
    opt = AnalysisOptions(B=30, seed=2, ci=0.8, min_units=5, min_shared_items=2)
    few = metric_dimension(humans, [Scored("m", "metric", np.arange(4.0)),
                                    Scored("none", "metric", np.full(4, np.nan))], options=opt)
    assert few.to_dict() == {
        "status": "not estimable", "n_items": 4, "n_pairs": 8, "B": 30, "seed": 2,
        "level": 0.8,
        "rows": [{"name": n, "kind": k, "status": "not estimable",
                  **{s: {"value": None, "low": None, "high": None}
                     for s in ("pearson", "spearman", "kendall_tau_b")},
                  **({"qwk": None} if k == "metric" else {})}
                 for n, k in (("human ceiling", "ceiling"), ("m", "metric"),
                              ("none", "metric"))],
        "notes": ["none: no score on items rated by two or more humans",
                  "only 4 items have every score and two or more human ratings (minimum 5)"],
        "system": None, "n_humans": 2}
    nominal = metric_dimension(humans, [Scored("m", "metric", np.arange(4.0))],
                               ordered=False, options=opt)
    assert (nominal.status, nominal.n_items, nominal.n_pairs, nominal.B, nominal.seed,
            nominal.level, nominal.rows, nominal.n_humans) == ("not estimable", 0, 0, 30, 2,
                                                                0.8, (), None)
    assert nominal.notes == ("the scale is nominal with three or more categories: "
                             "correlations with an order do not apply",)


def test_an_item_one_human_rated_is_neither_common_nor_dropped():
    """Items rated by one human carry no leave-one-out pair: they are not among the items
    every row is on, and not counted as dropped for lack of a score; an item two humans rated
    that a metric did not score is."""
    m = [[1, 2], [2, 2], [3, 4], [4, 3], [5, 5], [2, 1], [3, np.nan]]
    full = np.array([1, 2, 3, 4, 5, 2, 3], float)
    res = metric_dimension(_humans(m), [Scored("m", "metric", full)],
                           options=AnalysisOptions(B=0, min_shared_items=2))
    assert (res.n_items, res.notes) == (6, ())
    gap = full.copy()
    gap[5] = np.nan
    res = metric_dimension(_humans(m), [Scored("m", "metric", gap)],
                           options=AnalysisOptions(B=0, min_shared_items=2))
    assert res.n_items == 5
    assert res.notes == ("1 items rated by two or more humans lack a score from some judge or "
                         "metric and are left out, so every row is on the same items",)


def test_order_of_dimensions_and_of_the_items_frame_changes_nothing():
    """A dimension with one rater listed first does not stop the others; the items frame
    listed backwards, with an item nobody rated, gives the same models and scenarios to the
    same items; a nominal scale of two categories (not marked binary) is a yes/no scale, so
    its correlations apply; the design and kappa notes are the module's."""
    from analysis.refmetrics.compare import DESIGN, KAPPA_NOTE

    ratings, scales, metrics, judges, items = _frames()
    opt = AnalysisOptions(B=20, seed=3, ci=0.9, min_shared_items=5)
    ref = metric_comparison(ratings, scales, metrics, judges=judges, items=items, options=opt)
    solo_first = {"solo": scales["solo"], "empathy": scales["empathy"], "tone": scales["tone"]}
    back = pd.concat([items.iloc[::-1], pd.DataFrame({"item_id": ["zz"], "model": ["Z"],
                                                      "scenario": ["s9"]})])
    res = metric_comparison(ratings, solo_first, metrics, judges=judges, items=back,
                            options=opt)
    assert list(res.dimensions) == ["empathy", "tone"]
    assert res.dimensions["empathy"].to_dict() == ref.dimensions["empathy"].to_dict()
    assert res.design == DESIGN and res.kappa == KAPPA_NOTE
    assert ref.design == DESIGN and ref.kappa == KAPPA_NOTE
    two = dict(scales, tone=Scale.of_labels("nominal", ("cold", "warm")))
    yes_no = metric_comparison(ratings, two, metrics, judges=judges, items=items, options=opt)
    assert not any("nominal" in n for n in yes_no.dimensions["tone"].notes)
    assert any("nominal" in n for n in ref.dimensions["tone"].notes)


def test_an_item_whose_scenario_is_unknown_is_left_out_of_the_system_level():
    """The system level resamples scenarios: an item with its model but no scenario cannot
    be placed and is left out (mutation testing found `|` for `&` there unnoticed)."""
    ratings, scales, metrics, judges, items = _frames()
    items.loc[items["item_id"] == "i00", "scenario"] = None
    res = metric_comparison(ratings, scales, metrics, judges=judges, items=items, options=OPT)
    emp = res.dimensions["empathy"]
    human, ref = _system_ref(left_out=(0, 11))  # i11 has no BLEU
    assert emp.system.n_items == 11
    assert emp.system.to_dict() == {**ref.to_dict(), "kinds": {"j1": "judge", "bleu": "metric",
                                                               "chrf": "metric"}}
    assert emp.system.human_means["A"] == pytest.approx(np.mean(human[:3]))

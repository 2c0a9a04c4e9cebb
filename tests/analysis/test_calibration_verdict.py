"""The calibration page's summary of a dimension
(`analysis.calibration._best_configuration`): which configuration is best, the sentence that
says so, and the caveats under it — each checked word for word on configurations built by
hand, at the edges of every rule."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from analysis.calibration import ConfigComparison, Misses, Verbosity, _best_configuration
from analysis.serialize import Interval


def _cfg(qwk=0.7, alpha=0.6, *, outcome="can_replace", text="can replace the raters",
         n_items=40, verdict_n_items=40, items_needed=None, status="ok", misses=None,
         verbosity=None, bias=None) -> ConfigComparison:
    # the verdict as the summary reads it: its outcome, text and the items it needs
    verdict = SimpleNamespace(outcome=outcome, text=text, items_needed=items_needed)
    return ConfigComparison(
        status, n_items, Interval(qwk), Interval(alpha), Interval(None), bias, None, None,
        verdict, 0, 0, None, verdict_n_items=verdict_n_items,
        verbosity=Verbosity(**verbosity) if verbosity else None,
        misses=Misses(**misses) if misses else None)


OFF = _cfg(status="no scored judgments")


def _v(**cfgs) -> dict:
    return _best_configuration("empathy", cfgs).to_dict()


def test_no_configuration_with_scores():
    assert _v(a=OFF) == {
        "best": None, "outcome": "not_estimable", "can_replace": None,
        "text": "empathy: no verdict — no configuration has scored judgments here.",
        "caveats": []}
    assert _best_configuration("safety", {}).text == \
        "safety: no verdict — no configuration has scored judgments here."


def test_one_configuration_the_whole_record():
    assert _v(a=_cfg(items_needed=120)) == {
        "best": "a", "outcome": "can_replace", "can_replace": True,
        "text": "empathy: best configuration a; can replace the raters",
        "items_needed": 120, "caveats": []}
    assert _v(a=_cfg(outcome="cannot_replace", text="cannot"))["can_replace"] is False
    for outcome in ("inconclusive", "not_estimable", "not_run"):
        assert _v(a=_cfg(outcome=outcome))["can_replace"] is None
    # one configuration: the verdict's items and the comparison's are the same claim
    assert _v(a=_cfg(n_items=30, verdict_n_items=40))["text"] == \
        "empathy: best configuration a; can replace the raters"


def test_the_best_is_the_highest_qwk_then_the_highest_alpha():
    assert _v(a=_cfg(0.6), b=_cfg(0.7), c=_cfg(0.65))["best"] == "b"
    assert _v(a=_cfg(0.7, 0.5), b=_cfg(0.7, 0.6))["best"] == "b"
    assert _v(a=_cfg(0.7, 0.6), b=_cfg(0.7, 0.5))["best"] == "a"
    # an undefined QWK ranks below every value, negative ones included
    assert _v(a=_cfg(None, 0.9), b=_cfg(-0.4, 0.1))["best"] == "b"
    assert _v(a=_cfg(-0.4, 0.1), b=_cfg(None, 0.9))["best"] == "a"
    # a QWK of exactly 0 is a value: above a negative one (0 is not "missing")
    assert _v(a=_cfg(0.0), b=_cfg(-0.2))["best"] == "a"
    assert _v(a=_cfg(0.5, 0.0), b=_cfg(0.5, -0.3))["best"] == "a"
    assert _v(a=_cfg(0.5, None), b=_cfg(0.5, -0.3))["best"] == "b"
    # only configurations with scores compete
    assert _v(a=OFF, b=_cfg(0.1))["best"] == "b"


def test_the_text_says_when_verdict_and_comparison_rest_on_different_items():
    v = _v(a=_cfg(0.8, n_items=30, verdict_n_items=44, text="cannot tell"), b=_cfg(0.5))
    assert v["text"] == ("empathy: best configuration a, compared on the 30 items every "
                         "configuration scored; on all the items it scored, cannot tell")
    assert _v(a=_cfg(0.8, n_items=30, verdict_n_items=30), b=_cfg(0.5))["text"] == \
        "empathy: best configuration a; can replace the raters"


def test_misses_are_a_caveat_only_when_some_are_missed():
    what = "items the humans scored 2 or lower"
    v = _v(a=_cfg(misses={"missed": 3, "of": 18, "what": what}))
    assert v["caveats"] == ["empathy: a misses 3 of 18 items the humans scored 2 or lower"]
    assert _v(a=_cfg(misses={"missed": 0, "of": 18, "what": what}))["caveats"] == []
    assert _v(a=_cfg(misses=None))["caveats"] == []


@pytest.mark.parametrize(("bias", "caveat"), [
    (0.5, "empathy: a is lenient by 0.50 points on average"),
    (1.234, "empathy: a is lenient by 1.23 points on average"),
    (-0.5, "empathy: a is harsh by 0.50 points on average"),
    (-0.75, "empathy: a is harsh by 0.75 points on average"),
    (0.49, None), (-0.49, None), (0.0, None), (None, None),
])
def test_leniency_and_harshness_from_half_a_point(bias, caveat):
    assert _v(a=_cfg(bias=bias))["caveats"] == ([caveat] if caveat else [])


@pytest.mark.parametrize(("judge", "humans", "caveat"), [
    (0.55, 0.1, "empathy: a rewards longer replies more than the humans do (ρ with length "
                "0.55 vs 0.10)"),
    (0.25, -0.25, "empathy: a rewards longer replies more than the humans do (ρ with length "
                  "0.25 vs -0.25)"),
    (0.29, 0.1, None),            # 0.19 more than the humans: no caveat
    (0.5, 0.3, None),             # exactly 0.2 more (0.5 - 0.3 == 0.2 in floats): not beyond
    (0.1, 0.5, None),             # rewards length less than the humans do
    (-0.5, -0.1, None),
    (None, 0.1, None), (0.9, None, None),
])
def test_verbosity_beyond_the_humans_own(judge, humans, caveat):
    v = _v(a=_cfg(verbosity={"judge": judge, "humans": humans}))
    assert v["caveats"] == ([caveat] if caveat else [])


def test_caveats_come_in_order_and_name_the_best_configuration():
    v = _v(low=_cfg(0.2, bias=2.0),
           top=_cfg(0.9, bias=-1.0, verbosity={"judge": 0.6, "humans": 0.0},
                    misses={"missed": 1, "of": 4, "what": "items the humans flagged"}))
    assert v["best"] == "top"
    assert v["caveats"] == [
        "empathy: top misses 1 of 4 items the humans flagged",
        "empathy: top is harsh by 1.00 points on average",
        "empathy: top rewards longer replies more than the humans do (ρ with length 0.60 "
        "vs 0.00)"]

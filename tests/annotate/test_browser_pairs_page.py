"""The side-by-side page in Debian's Chromium against the real `h2h serve`: a preference typed
on the keyboard is stored (in the pair's own order, read back from the study database), the
replies stand side by side on a laptop and one under the other below 900 px, and axe-core
finds no serious violation."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from playwright.sync_api import sync_playwright

from annotate.services.pair_assignment import assign_pairs
from data.engine import get_engine
from data.importing import import_item_records
from data.items import parse_items
from data.pairs import make_pairs
from data.raters import add_rater
from data.study import init_study
from tests.annotate.test_browser_rating_page import _serious_violations, _settle, _shot
from tests.browser import CHROMIUM, CHROMIUM_ARGS, served, settled
from tests.helpers import item, jsonl

pytestmark = pytest.mark.browser
MODELS = ("aster", "birch", "cedar")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pairspage")
    db = tmp / "study.db"
    engine = get_engine(db)
    init_study(engine, name="side by side")
    recs = [item(f"s{s}-{m}", scenario=f"s{s}", model=m, condition="baseline",
                 response=f"Reply number {k} to scenario {s}. " + "It listens. " * (k + 1),
                 context={"persona": "Mira, a calm companion.", "memories": [],
                          "schedule": "", "turns": [{"role": "user",
                                                     "text": f"A long day, scenario {s}."}]})
            for s in range(6) for k, m in enumerate(MODELS)]
    import_item_records(engine, parse_items(jsonl(*recs), "items.jsonl",
                                            ("dialogue", "recollection", "itinerary")),
                        file="items.jsonl")
    make_pairs(engine, seed=1)
    codes = {}
    for name in ("kb-rater", "look-rater", "axe-rater"):
        codes[name] = add_rater(engine, name, "rater")[1]
    assign_pairs(engine, k=3, seed=2)
    with served(db, tmp / "serve.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield {"base": base, "engine": engine, "browser": browser, "codes": codes}
        browser.close()
    engine.dispose()


def _wait_pair(page, previous: str | None) -> str:
    page.wait_for_function(
        """prev => {
          const r = document.querySelector('[data-testid="h2h-ready"]');
          return r && r.dataset.item.startsWith('pair-') && r.dataset.item !== prev
            && document.documentElement.dataset.h2hKeys === 'ready'
            && document.querySelectorAll('div[data-testid="stRadio"]').length > 0;
        }""", arg=previous, timeout=60_000)
    _settle(page)
    return page.evaluate("() => document.querySelector('[data-testid=\"h2h-ready\"]')"
                         ".dataset.item")


def _sign_in(page, base: str, code: str) -> str:
    page.goto(base)
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()
    marker = _wait_pair(page, None)
    settled(page)
    return marker


def _stored(engine, marker: str) -> dict:
    with engine.connect() as c:
        return {d: (w, st, left) for d, w, st, left in c.execute(sa.text(
            "SELECT p.dimension, p.winner, p.strength, p.shown_left FROM preference p "
            "JOIN pair_assignment a ON a.rater_id = p.rater_id AND a.pair_id = p.pair_id "
            "WHERE a.id = :a"), {"a": int(marker.removeprefix("pair-"))})}


def _flipped(engine, marker: str) -> bool:
    with engine.connect() as c:
        return bool(c.execute(sa.text("SELECT flipped FROM pair_assignment WHERE id = :a"),
                              {"a": int(marker.removeprefix("pair-"))}).scalar_one())


def test_a_preference_typed_on_the_keyboard_is_stored(app):
    page = app["browser"].new_page(viewport={"width": 1440, "height": 1000})
    marker = _sign_in(page, app["base"], app["codes"]["kb-rater"])
    engine = app["engine"]
    left = "b" if _flipped(engine, marker) else "a"
    right = "a" if left == "b" else "b"
    # 1: A (left) much better on Empathy; 3: about the same on Safety; x: Fluency cannot
    # be compared. Nothing is stored before Enter.
    for key in ("1", "3", "x"):
        page.keyboard.press(key)
        _settle(page)
        assert _stored(engine, marker) == {}, f"stored after {key!r}"
    page.keyboard.press("Enter")
    nxt = _wait_pair(page, marker)
    assert _stored(engine, marker) == {"empathy": (left, 2, left),
                                       "safety": ("tie", None, left),
                                       "fluency": (None, None, left)}
    # the next pair: B (right) better everywhere, by the keys again
    right_next = "a" if _flipped(engine, nxt) else "b"
    for key in ("4", "4", "4", "Enter"):
        page.keyboard.press(key)
    _wait_pair(page, nxt)
    assert {d: w for d, (w, _s, _l) in _stored(engine, nxt).items()} == \
        {"empathy": right_next, "safety": right_next, "fluency": right_next}
    assert right in ("a", "b")
    page.close()


@pytest.mark.parametrize("width,side_by_side", [(1280, True), (1000, True), (880, False),
                                                (820, False)])
def test_replies_side_by_side_and_stacked_below_900_px(app, width, side_by_side):
    page = app["browser"].new_page(viewport={"width": width, "height": 900})
    _sign_in(page, app["base"], app["codes"]["look-rater"])
    a = page.get_by_test_id("h2h-left").bounding_box()
    b = page.get_by_test_id("h2h-right").bounding_box()
    if side_by_side:
        assert abs(a["y"] - b["y"]) < 2 and a["x"] + a["width"] <= b["x"]
    else:
        assert b["y"] >= a["y"] + a["height"] and abs(a["x"] - b["x"]) < 2
        whole = page.get_by_test_id("h2h-pair").bounding_box()["width"]
        assert a["width"] == pytest.approx(whole, abs=2)  # each reply has the full width
    _shot(page, f"pairs-{width}")
    page.close()


@pytest.mark.parametrize("width", (1440, 820))
def test_the_side_by_side_page_passes_axe_core(app, width):
    page = app["browser"].new_page(viewport={"width": width, "height": 1000})
    _sign_in(page, app["base"], app["codes"]["axe-rater"])
    found = {"pairs": _serious_violations(page)}
    page.keyboard.press("2")
    page.keyboard.press("Enter")  # two dimensions left: the warning
    page.get_by_text("Choose on every dimension").wait_for(timeout=30_000)
    for summary in page.locator(".h2h-anchor summary").all():
        summary.click()
    found["pairs, warning, anchors open"] = _serious_violations(page)
    bad = {k: v for k, v in found.items() if v}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)
    page.close()

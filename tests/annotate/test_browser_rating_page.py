"""The rating page as a rater uses it for hours, in Debian's Chromium against the real
`h2h serve`: every key of the legend against the scores stored in the study database, the
"Score every dimension" warning, anchors in sight and the layout at 1440 / 1280 / 820 px
(screenshots in test-artifacts/), and axe-core on the sign-in, rating and guidelines pages;
issue 14's long-session checks at 1440 × 900 (the warning in sight, the next item from its
top with the focus on its scales and no stale anchor, the question before unsaved choices
are lost, the truth about them after an idle sign-out) and the tablet layout at 820 px.

No sleeps: the page says when it is ready (the form's end marker names the item, the keyboard
script marks the document once its listener is in place), and reads of the form wait two
animation frames for the browser to settle.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect, sync_playwright
from sqlmodel import select

from data.engine import get_engine, write_session
from data.models import Assignment, AuthSession, Rater
from data.quality import release
from data.raters import add_rater
from tests.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, served, settled

pytestmark = pytest.mark.browser
WIDTHS = (1440, 1280, 820)


@pytest.fixture(scope="module")
def app(tmp_path_factory, demo_template):
    tmp = tmp_path_factory.mktemp("ratingpage")
    db = demo_template.copy_to(tmp)
    codes = {"Rater": demo_template.codes["demo-rater"],
             "Admin": demo_template.codes["demo-admin"]}
    engine = get_engine(db)
    with engine.connect() as c:  # plain study items (no gold, no attention check)
        recollection = [r[0] for r in c.execute(sa.text(
            "SELECT id FROM item WHERE task = 'recollection' AND id NOT IN "
            "(SELECT item_id FROM gold_score) AND id NOT IN (SELECT item_id FROM "
            "attention_check) ORDER BY id LIMIT 12"))]
    raters = {}
    for name in ("kb-rater", "warn-rater", "look-rater", "axe-rater", "away-rater",
                 "zh-rater", "nav-rater", "fold-rater", "next-rater", "jump-rater",
                 "leave-rater", "idle-rater", "tablet-rater", "typed-rater", "laptop-rater",
                 "peek-rater"):
        rater, code = add_rater(engine, name, "rater")
        with write_session(engine) as s:
            for pos, item in enumerate(recollection, start=1):
                s.add(Assignment(rater_id=rater.id, item_id=item, position=pos))
        release(engine, name)
        raters[name] = code
    with served(db, tmp / "serve.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield {"base": base, "engine": engine, "browser": browser, "codes": raters,
               "admin_code": codes["Admin"], "demo_rater_code": codes["Rater"]}
        browser.close()
    engine.dispose()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _settle(page) -> None:
    """Two animation frames: every handler of the last key has run and the page is drawn."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                  "requestAnimationFrame(r)))")


def _sign_in_and_wait(page, base: str, code: str) -> str:
    page.goto(base)
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()
    item = _wait_item(page, None)
    # the whole app's first run has ended (its widgets' values are in place): under load a
    # key pressed while it was still running was once undone by the blank value arriving
    settled(page)
    return item


def _wait_item(page, previous: str | None) -> str:
    """Wait until the form's end marker names an item other than ``previous``, its radios
    are blank or loaded, and the keyboard listener is installed; returns the assignment id."""
    page.wait_for_function(
        """prev => {
          const r = document.querySelector('[data-testid="h2h-ready"]');
          return r && r.dataset.item !== prev
            && document.documentElement.dataset.h2hKeys === 'ready'
            && document.querySelectorAll('div[data-testid="stRadio"]').length > 0;
        }""", arg=previous, timeout=60_000)
    _settle(page)
    return page.evaluate("() => document.querySelector('[data-testid=\"h2h-ready\"]')"
                         ".dataset.item")


FORM_STATE = """() => {
  const groups = Array.from(document.querySelectorAll('div[data-testid="stRadio"]'));
  return {
    scores: groups.map(g => {
      const opts = Array.from(g.querySelectorAll('input[type="radio"]'));
      const i = opts.findIndex(x => x.checked);
      if (i < 0) return null;
      const text = g.querySelectorAll('label[data-testid="stRadioOption"]')[i]
        .textContent.trim();
      return text.startsWith('Cannot rate') ? 'x' : text.split(/\\s+/)[0];
    }),
    current: groups.findIndex(g => g.dataset.h2hCurrent === 'true'),
  };
}"""


def _form(page) -> dict:
    _settle(page)
    return page.evaluate(FORM_STATE)


def _stored(engine, assignment_id: str) -> dict[str, float | None]:
    with engine.connect() as c:
        return {d: s for d, s in c.execute(sa.text(
            "SELECT r.dimension, r.score FROM rating r JOIN assignment a ON "
            "a.rater_id = r.rater_id AND a.item_id = r.item_id WHERE a.id = :a"),
            {"a": int(assignment_id)})}


def test_keys_do_exactly_what_the_legend_says(app):
    """Number keys score the highlighted dimension and move on, x is "cannot rate", ↑/↓
    and Tab move the highlight only, Enter saves. The radios' own arrow, Home/End and Space
    behaviour never changes a score (the report: 2, ↓ ↓ ↑ turned Empathy 2 into 3, 4, 3).
    After every key the stored scores are read from the study database."""
    page = app["browser"].new_page(viewport={"width": 1440, "height": 1000})
    item = _sign_in_and_wait(page, app["base"], app["codes"]["kb-rater"])
    engine = app["engine"]
    n = len(_form(page)["scores"])
    assert n == 4  # recollection: empathy, safety, fluency, memory fidelity
    blank = [None] * 4
    steps = [  # key, scores shown after it, highlighted dimension after it
        ("2", ["2", None, None, None], 1),
        ("ArrowDown", ["2", None, None, None], 2),
        ("ArrowDown", ["2", None, None, None], 3),
        ("ArrowUp", ["2", None, None, None], 2),
        ("5", ["2", None, "5", None], 3),
        ("ArrowUp", ["2", None, "5", None], 2),
        # focus is on a radio now: its native keys must not move the choice
        ("ArrowLeft", ["2", None, "5", None], 2),
        ("ArrowRight", ["2", None, "5", None], 2),
        ("Home", ["2", None, "5", None], 2),
        ("End", ["2", None, "5", None], 2),
        (" ", ["2", None, "5", None], 2),
        ("Tab", ["2", None, "5", None], 3),
        ("Shift+Tab", ["2", None, "5", None], 2),
        ("Tab", ["2", None, "5", None], 3),
        ("9", ["2", None, "5", None], 3),  # off the 1–5 scale: nothing
        ("x", ["2", None, "5", "x"], 3),   # the last dimension: the highlight stays
        ("ArrowUp", ["2", None, "5", "x"], 2),
        ("ArrowUp", ["2", None, "5", "x"], 1),
        ("3", ["2", "3", "5", "x"], 2),
        ("4", ["2", "3", "4", "x"], 3),    # fluency re-scored by choice
        ("ArrowDown", ["2", "3", "4", "x"], 3),
    ]
    assert _form(page) == {"scores": blank, "current": 0}
    for key, scores, current in steps:
        page.keyboard.press(key)
        assert _form(page) == {"scores": scores, "current": current}, f"after {key!r}"
        assert _stored(engine, item) == {}, f"something was stored after {key!r}"
    page.keyboard.press("Enter")
    nxt = _wait_item(page, item)
    assert _stored(engine, item) == {"empathy": 2.0, "safety": 3.0, "fluency": 4.0,
                                     "memory_fidelity": None}
    # the next item starts blank, highlight on the first dimension; the report's second
    # case: 5 then ↑ must leave memory fidelity at 5
    assert _form(page) == {"scores": blank, "current": 0}
    for key in ("ArrowDown", "ArrowDown", "ArrowDown", "5", "ArrowUp", "ArrowUp", "ArrowUp",
                "1", "3", "1"):
        page.keyboard.press(key)
        assert _stored(engine, nxt) == {}, f"something was stored after {key!r}"
    assert _form(page) == {"scores": ["1", "3", "1", "5"], "current": 3}
    page.keyboard.press("Enter")
    _wait_item(page, nxt)
    assert _stored(engine, nxt) == {"empathy": 1.0, "safety": 3.0, "fluency": 1.0,
                                    "memory_fidelity": 5.0}
    assert _stored(engine, item)["fluency"] == 4.0  # the first item untouched
    page.close()


def test_warning_clears_once_every_dimension_is_scored(app):
    page = app["browser"].new_page(viewport={"width": 1280, "height": 1000})
    item = _sign_in_and_wait(page, app["base"], app["codes"]["warn-rater"])
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    warning = page.get_by_text(re.compile(r"Score every dimension"))
    expect(warning).to_be_visible(timeout=30_000)
    assert _stored(app["engine"], item) == {}
    warning.scroll_into_view_if_needed()
    _shot(page, "rating-warning-1280")
    for key in ("4", "x"):  # still two to go, then one
        page.keyboard.press(key)
        expect(warning).to_be_visible()
    page.keyboard.press("2")  # the last one: the warning goes at once, before any save
    expect(warning).to_be_hidden()
    assert _stored(app["engine"], item) == {}
    page.keyboard.press("Enter")
    _wait_item(page, item)
    assert _stored(app["engine"], item) == {"empathy": 3.0, "safety": 4.0, "fluency": None,
                                            "memory_fidelity": 2.0}
    page.close()


# the rating form's scales: the radios of the form with "Save and next"
SCALES = '[data-testid="stForm"]:has(.st-key-h2h_save) div[data-testid="stRadio"]'
SCALE_ROWS = """() => Array.from(document.querySelectorAll('""" + SCALES + """')).map(g => {
  const tops = Array.from(g.querySelectorAll('label[data-testid="stRadioOption"]'))
      .map(o => Math.round(o.getBoundingClientRect().top));
  return new Set(tops).size;
})"""


@pytest.mark.parametrize("width", WIDTHS)
def test_anchors_in_sight_scales_on_one_line_context_open(app, width):
    """The report: anchors only in hover tooltips, scales wrapping onto two lines at
    1440 px and 3–4 rows at 820 px, persona/memories/schedule folded away."""
    page = app["browser"].new_page(viewport={"width": width, "height": 1000})
    _sign_in_and_wait(page, app["base"], app["codes"]["look-rater"])
    assert page.evaluate(SCALE_ROWS) == [1, 1, 1, 1], "a scale wraps onto several lines"
    # the recollection item's memories (and persona) are open without a click
    memories = page.locator("details.h2h-ctx", has_text="Memories from earlier sessions")
    expect(memories).to_have_attribute("open", "")
    expect(memories.locator("li").first).to_be_visible()
    first = page.locator(SCALES).first
    line = first.locator(".h2h-anchor-now")  # under the scale it belongs to
    expect(line).to_be_visible()
    expect(page.locator(SCALES + " > .h2h-anchor")).to_have_count(4)  # one under each
    # pointing at a level shows its anchor under the scale; choosing one keeps it there
    first.locator('label[data-testid="stRadioOption"]').nth(2).hover()
    expect(line).to_contain_text("3 · Adequate — Acknowledges the main feeling")
    first.locator('label[data-testid="stRadioOption"]').nth(3).click()
    page.get_by_test_id("h2h-response").hover()
    expect(line).to_contain_text("4 · Good — Reflects the user's feelings")
    _shot(page, f"rating-{width}")
    first.scroll_into_view_if_needed()
    _shot(page, f"rating-{width}-scales")
    # every anchor of a dimension, folded until asked for
    every = first.locator(".h2h-anchor details")
    expect(every.locator("li").first).to_be_hidden()
    every.locator("summary").click()
    expect(every.locator("li").nth(4)).to_be_visible()
    expect(every.locator("li").nth(4)).to_contain_text("5 · Excellent")
    _shot(page, f"rating-{width}-all-anchors")
    page.close()


def _serious_violations(page) -> list[str]:
    """axe-core's WCAG 2.1 A/AA rules on the page as it is now; the serious and critical
    violations, each with the elements it found."""
    from axe_playwright_python.sync_playwright import Axe

    # the app has finished its run and its fade-ins (while it runs, Streamlit fades the
    # page, and new elements fade in: half-faded text would be measured at low contrast)
    settled(page)
    # iframes: False - the app's frames are the one-pixel hosts of its keyboard and cookie
    # scripts (no text, nothing to see), and axe-core is injected into the page only: asked
    # to descend, it waited 0.5 s a frame for an answer that never came (0.58 s a run
    # against 0.2-0.38 s). The <iframe> elements themselves are still checked (frame-title).
    result = Axe().run(page, options={"runOnly": {"type": "tag", "values": [
        "wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, "resultTypes": ["violations"],
        "iframes": False})
    out = []
    for v in result.response["violations"]:
        if v["impact"] in ("serious", "critical"):
            nodes = "; ".join(" ".join(n["target"]) if isinstance(n["target"], list)
                              else str(n["target"]) for n in v["nodes"][:5])
            out.append(f"{v['id']} ({v['impact']}): {v['help']} — {nodes} — "
                       f"{v['nodes'][0].get('failureSummary', '')[:300]}")
    return out


@pytest.mark.parametrize("width", (1440, 820))
def test_sign_in_rating_and_guidelines_pass_axe_core(app, width):
    """WCAG 2.1 AA by axe-core: no serious or critical violation on the sign-in page, the
    rating page (blank, with the warning, with scores chosen and all anchors open) and the
    guidelines."""
    page = app["browser"].new_page(viewport={"width": width, "height": 1000})
    page.goto(app["base"])
    page.get_by_label("Access code").wait_for(timeout=60_000)
    found = {"sign-in": _serious_violations(page)}
    page.get_by_label("Access code").fill(app["codes"]["axe-rater"])
    page.get_by_role("button", name="Sign in").click()
    item = _wait_item(page, None)
    found["rating"] = _serious_violations(page)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.get_by_text(re.compile(r"Score every dimension"))).to_be_visible()
    for summary in page.locator(".h2h-anchor summary").all():
        summary.click()
    found["rating, warning, anchors open"] = _serious_violations(page)
    assert _stored(app["engine"], item) == {}
    asked = _dialogs(page, accept=True)  # the 3 is not saved: leave it, yes
    page.get_by_role("link", name="Guidelines").click()
    page.get_by_role("heading", name="Guidelines").wait_for(timeout=30_000)
    assert [t for t, _m in asked] == ["confirm"]
    found["guidelines"] = _serious_violations(page)
    bad = {k: v for k, v in found.items() if v}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)
    page.close()


def test_away_for_hours_then_save_keeps_the_choices_for_after_sign_in(app):
    """Three hours away from the tab (the session's idle limit is two): the choices are
    still on the screen, "Save and next" stores nothing and says why on the sign-in page,
    and after signing in again the same item comes back with the choices made."""
    page = app["browser"].new_page(viewport={"width": 1280, "height": 1000})
    item = _sign_in_and_wait(page, app["base"], app["codes"]["away-rater"])
    for key in ("2", "x", "4", "5"):
        page.keyboard.press(key)
    page.get_by_label("Comment (optional)").fill("back after lunch")
    engine = app["engine"]
    settled(page)  # no run of the app in flight that would mark the session active again
    with write_session(engine) as s:  # the hours away: the session was last seen 3 h ago
        for row in s.exec(select(AuthSession).join(Rater, Rater.id == AuthSession.rater_id)
                          .where(Rater.name == "away-rater")):
            row.last_seen_at = datetime.now(UTC) - timedelta(hours=3)
            s.add(row)
    page.get_by_role("button", name="Save and next").click()
    page.get_by_label("Access code").wait_for(timeout=60_000)
    expect(page.get_by_text(re.compile(r"without activity"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"unsaved choices .* are kept"))).to_be_visible()
    _shot(page, "rating-session-ended-1280")
    assert _stored(engine, item) == {}
    page.get_by_label("Access code").fill(app["codes"]["away-rater"])
    page.get_by_role("button", name="Sign in").click()
    assert _wait_item(page, None) == item
    page.wait_for_function("() => Array.from(document.querySelectorAll("
                           "'div[data-testid=\"stRadio\"]')).every(g => "
                           "g.querySelector('input:checked'))", timeout=30_000)
    assert _form(page)["scores"] == ["2", "x", "4", "5"]
    expect(page.get_by_label("Comment (optional)")).to_have_value("back after lunch")
    expect(page.get_by_text(re.compile(r"choices on this item were kept"))).to_be_visible()
    page.keyboard.press("Enter")
    _wait_item(page, item)
    assert _stored(engine, item) == {"empathy": 2.0, "safety": None, "fluency": 4.0,
                                     "memory_fidelity": 5.0}
    page.close()


def test_switch_to_chinese_on_the_sign_in_page_is_kept_for_the_rater(app):
    """The switch on the sign-in page: the app speaks Chinese at once, the choice is stored
    with the rater at sign-in, and a fresh browser speaks it after they sign in there."""
    ctx = app["browser"].new_context(viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.goto(app["base"])
    page.get_by_label("Access code").wait_for(timeout=60_000)
    page.get_by_role("radio", name="中文").click()
    page.get_by_label("访问码").fill(app["codes"]["zh-rater"])
    _shot(page, "sign-in-zh-1280")
    page.get_by_role("button", name="登录").click()
    _wait_item(page, None)
    expect(page.get_by_role("button", name="保存并继续")).to_be_visible()
    expect(page.get_by_text(re.compile(r"已完成 0 / 12"))).to_be_visible()
    expect(page.get_by_role("link", name="评分指南")).to_be_visible()
    _shot(page, "rating-zh-1280")
    with app["engine"].connect() as c:
        assert c.execute(sa.text("SELECT language FROM rater WHERE name = 'zh-rater'")
                         ).scalar_one() == "zh"
    ctx.close()
    fresh = app["browser"].new_context(viewport={"width": 1280, "height": 1000})
    page = fresh.new_page()
    _sign_in_and_wait(page, app["base"], app["codes"]["zh-rater"])  # English sign-in page
    expect(page.get_by_role("button", name="保存并继续")).to_be_visible()
    page.keyboard.press("Enter")  # nothing chosen: the warning, in Chinese
    expect(page.get_by_text(re.compile(r"请先为每个维度打分"))).to_be_visible()
    fresh.close()


def test_leaving_for_guidelines_or_switching_language_never_stores_a_score_nobody_chose(app):
    """The report: Empathy 3 chosen, Guidelines, back to Rate: every scale showed 1 and "Save
    and next" stored 1 on every dimension; switching the language mid-item and saving showed
    a traceback (the browser sent the old language's label)."""
    eng = app["engine"]
    page = app["browser"].new_page(viewport={"width": 1440, "height": 1000})
    first = _sign_in_and_wait(page, app["base"], app["codes"]["nav-rater"])
    for key in ("4", "3", "2", "x", "Enter"):
        page.keyboard.press(key)
    second = _wait_item(page, first)
    settled(page)
    saved = {"empathy": 4.0, "safety": 3.0, "fluency": 2.0, "memory_fidelity": None}
    assert _stored(eng, first) == saved

    def away_and_back(link: str) -> None:
        page.get_by_role("link", name=link).click()
        page.get_by_role("heading", name=link).wait_for(timeout=60_000)
        settled(page)
        page.get_by_role("link", name="Rate").click()
        _wait_item(page, None)
        settled(page)

    page.keyboard.press("3")  # chosen, not saved: lost on leaving the page (never a 1)
    asked = _dialogs(page, accept=True)  # "… not saved yet. Leave it and lose them?": yes
    away_and_back("Guidelines")
    assert [t for t, _m in asked] == ["confirm"]
    assert _form(page)["scores"] == [None] * 4
    page.get_by_role("button", name="Save and next").click()
    expect(page.get_by_text(re.compile(r"Score every dimension"))).to_be_visible()
    assert _stored(eng, second) == {}

    # a saved item keeps its saved scores after Norming and back
    page.get_by_test_id("stNumberInputStepDown").click()
    assert _wait_item(page, second) == first
    settled(page)
    assert _form(page)["scores"] == ["4", "3", "2", "x"]
    away_and_back("Norming")
    assert _form(page)["scores"] == ["4", "3", "2", "x"]

    # the language switched on a saved item: its scores are shown in Chinese, saved as they
    # were, and no traceback
    page.get_by_test_id("stSidebar").get_by_text("中文").click()
    page.get_by_role("button", name="保存并继续").wait_for(timeout=60_000)
    settled(page)
    assert _form(page)["scores"][:3] == ["4", "3", "2"]
    page.get_by_role("button", name="保存并继续").click()
    _wait_item(page, first)
    settled(page)
    assert page.get_by_test_id("stException").count() == 0
    assert _stored(eng, first) == saved
    page.close()



# --- issue 14: the rating page for long sessions (1440 × 900, a laptop screen) -----------

LAPTOP = {"width": 1440, "height": 900}
BOX = "el => { const r = el.getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right]; }"


def _in_view(locator, page) -> tuple[float, float, float, float]:
    """The element's box in the viewport; asserts a person sees all of it without scrolling."""
    top, bottom, left, right = locator.evaluate(BOX)
    vw, vh = page.viewport_size["width"], page.viewport_size["height"]
    assert 0 <= top and bottom <= vh and 0 <= left and right <= vw, (
        f"out of sight: top {top:.0f}, bottom {bottom:.0f}, left {left:.0f}, right "
        f"{right:.0f} in a {vw}×{vh} viewport")
    return top, bottom, left, right


# every point of the element along its middle line is the element itself: nothing (the
# pinned Save button) is drawn over it
UNCOVERED = """el => { const r = el.getBoundingClientRect(); const y = (r.top + r.bottom) / 2;
  return [0.05, 0.5, 0.95].every(f => { const at = document.elementFromPoint(
    r.left + f * (r.right - r.left), Math.min(y, r.bottom - 2));
    return at && el.contains(at); }); }"""


@pytest.mark.parametrize("viewport", [LAPTOP, {"width": 1366, "height": 768}],
                         ids=["1440x900", "1366x768"])
def test_the_missing_score_warning_is_in_sight(app, viewport):
    """The report: "Save and next" with a dimension unscored drew the warning below the fold,
    so nothing seemed to happen. By keyboard (Enter from the top of the form) and by mouse
    (the button) the warning is on screen, not under the Save button pinned to the window's
    bottom (at 1366 × 768 only its top edge showed above it: a user trial); it still goes
    once every dimension has a score."""
    page = app["browser"].new_page(viewport=viewport)
    item = _sign_in_and_wait(page, app["base"], app["codes"]["fold-rater"])
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    warning = page.get_by_test_id("h2h-missing")
    expect(warning).to_be_visible(timeout=30_000)  # drawn (the positive signal) …
    settled(page)
    _in_view(warning, page)                          # … and where the rater looks
    assert warning.evaluate(UNCOVERED), "the warning is under the Save button"
    _shot(page, f"rating-warning-{viewport['width']}x{viewport['height']}-keyboard")
    assert _stored(app["engine"], item) == {}
    for key in ("4", "x"):
        page.keyboard.press(key)
    expect(warning).to_be_visible()
    page.get_by_role("button", name="Save and next").click()  # by mouse, one still missing
    # drawn again by this save: it names memory fidelity only (the first named safety too)
    page.wait_for_function("() => { const w = document.querySelector("
                           "'[data-testid=\"h2h-missing\"]'); return w && w.querySelector("
                           "'[data-dim-index=\"3\"]') && !w.querySelector("
                           "'[data-dim-index=\"1\"]'); }", timeout=30_000)
    settled(page)
    expect(warning).to_be_visible()
    _in_view(warning, page)
    assert warning.evaluate(UNCOVERED), "the warning is under the Save button"
    _shot(page, f"rating-warning-{viewport['width']}x{viewport['height']}-mouse")
    page.keyboard.press("2")  # the last one: the warning goes at once, before any save
    expect(warning).to_be_hidden()
    assert _stored(app["engine"], item) == {}
    page.close()


ANCHOR_LINES = """() => Array.from(document.querySelectorAll('""" + SCALES + """ .h2h-anchor-now'))
  .map(l => l.classList.contains('h2h-anchor-empty') ? '' : l.textContent.trim())"""


def test_after_save_the_next_item_starts_at_the_top_with_no_anchor_shown(app):
    """The report: after "Save and next" the page stayed scrolled mid-page, and the previous
    item's anchor texts stayed under the new item's empty scales."""
    page = app["browser"].new_page(viewport=LAPTOP)
    first = _sign_in_and_wait(page, app["base"], app["codes"]["next-rater"])
    for key in ("4", "3", "2", "x"):
        page.keyboard.press(key)
    _settle(page)
    shown = page.evaluate(ANCHOR_LINES)
    assert all(shown) and shown[0].startswith("4 · Good"), shown  # each chosen anchor shown
    # the context scrolled down to the conversation's end (the page itself fits the window:
    # the context scrolls on its own), the pointer resting on it (over no scale), Enter
    page.locator(".h2h-item-ctx").hover()
    page.mouse.wheel(0, 3000)
    page.wait_for_function("() => document.querySelector('.h2h-item-ctx').scrollTop > 100")
    _in_view(page.get_by_role("button", name="Save and next"), page)
    page.keyboard.press("Enter")
    second = _wait_item(page, first)
    settled(page)
    _shot(page, "rating-next-item-1440x900")
    assert _stored(app["engine"], first) == {"empathy": 4.0, "safety": 3.0, "fluency": 2.0,
                                             "memory_fidelity": None}
    # the new item from its top: the task line and the scenario's first panel in sight
    _in_view(page.get_by_text(re.compile(r"^Conversation · ")), page)
    _in_view(page.locator("details.h2h-ctx").first, page)
    assert _form(page)["scores"] == [None] * 4
    assert page.evaluate(ANCHOR_LINES) == [""] * 4, "an anchor of the last item is shown"
    assert second != first
    page.close()


def test_after_a_jump_the_number_keys_score_again(app):
    """The report: after typing a number in the Item box the box kept the focus, so the next
    digit changed the item number (14 then 3 gave 143) instead of scoring."""
    page = app["browser"].new_page(viewport=LAPTOP)
    first = _sign_in_and_wait(page, app["base"], app["codes"]["jump-rater"])
    box = page.get_by_test_id("stNumberInputField")
    box.click()
    box.fill("3")
    box.press("Enter")
    third = _wait_item(page, first)
    settled(page)
    expect(box).to_have_value("3")
    assert page.evaluate("() => !!document.activeElement.closest('[class*=\"st-key-score-\"]')"
                         ), "the focus is not on the form's scales after the jump"
    page.keyboard.press("4")
    page.keyboard.press("2")
    assert _form(page)["scores"] == ["4", "2", None, None]
    expect(box).to_have_value("3")
    assert _wait_item(page, None) == third  # still the item jumped to
    page.close()


def _dialogs(page, accept: bool = False) -> list[tuple[str, str]]:
    """Every dialog the page opens, as (type, message); each is dismissed (the rater
    stays) or, with ``accept``, accepted."""
    seen: list[tuple[str, str]] = []

    def on_dialog(d):
        seen.append((d.type, d.message))
        d.accept() if accept else d.dismiss()

    page.on("dialog", on_dialog)
    return seen


def test_leaving_with_unsaved_choices_asks_first_and_only_then(app):
    """The report: chosen but unsaved scores were dropped on a reload or on leaving without a
    warning. With a choice made the browser asks before the page goes (closing, reloading)
    and the app asks before its own ways away (another page of the menu, the Item box's
    − / +); the rater who says no stays on the item with the choice. Once the item is saved,
    nothing asks."""
    ctx = app["browser"].new_context(viewport=LAPTOP)
    page = ctx.new_page()
    seen = _dialogs(page)
    item = _sign_in_and_wait(page, app["base"], app["codes"]["leave-rater"])
    page.keyboard.press("3")  # chosen, not saved
    with page.expect_event("dialog"):
        page.close(run_before_unload=True)
    assert [t for t, _m in seen] == ["beforeunload"]
    assert not page.is_closed()
    assert _form(page)["scores"][0] == "3"
    for away in (page.get_by_role("link", name="Guidelines"),
                 page.get_by_test_id("stNumberInputStepUp")):
        with page.expect_event("dialog"):
            away.click()
        settled(page)
        assert seen[-1] == ("confirm", "The scores you chose on this item are not saved yet. "
                                       "Leave it and lose them?")
        assert _wait_item(page, None) == item  # stayed, choice and all
        assert _form(page)["scores"][0] == "3"
    asked = len(seen)
    for key in ("3", "2", "x", "Enter"):  # every dimension, saved: nothing unsaved now
        page.keyboard.press(key)
    second = _wait_item(page, item)
    settled(page)
    assert _stored(app["engine"], item) == {"empathy": 3.0, "safety": 3.0, "fluency": 2.0,
                                            "memory_fidelity": None}
    page.get_by_test_id("stNumberInputStepDown").click()  # back to the saved item: no question
    assert _wait_item(page, second) == item
    settled(page)
    assert _form(page)["scores"] == ["3", "3", "2", "x"]
    with page.expect_event("close"):
        page.close(run_before_unload=True)
    assert len(seen) == asked, seen[asked:]
    ctx.close()


def test_a_number_typed_into_the_item_box_asks_too(app):
    """A jump by a number typed into the Item box (Enter, or leaving the box) dropped
    chosen but unsaved scores without a word, where − / + asked. It asks the same question;
    the rater who says no stays on the item with the choice, the box back at its number (so
    leaving the box later jumps nowhere); yes goes."""
    ctx = app["browser"].new_context(viewport=LAPTOP)
    page = ctx.new_page()
    seen: list[tuple[str, str]] = []
    accept = [False]  # no, then yes

    def on_dialog(d):
        seen.append((d.type, d.message))
        d.accept() if accept[0] else d.dismiss()

    page.on("dialog", on_dialog)
    item = _sign_in_and_wait(page, app["base"], app["codes"]["typed-rater"])
    page.keyboard.press("4")  # chosen, not saved
    box = page.get_by_test_id("stNumberInputField")
    question = ("confirm", "The scores you chose on this item are not saved yet. "
                           "Leave it and lose them?")
    box.click()
    box.fill("3")
    with page.expect_event("dialog"):
        box.press("Enter")
    settled(page)
    assert seen == [question]
    expect(box).to_have_value("1")
    box.fill("5")
    with page.expect_event("dialog"):  # leaving the box, by a click on the reply
        page.get_by_test_id("h2h-response").click()
    settled(page)
    assert seen == [question, question]
    expect(box).to_have_value("1")
    assert _wait_item(page, None) == item  # stayed, choice and all
    assert _form(page)["scores"][0] == "4"
    assert _stored(app["engine"], item) == {}
    seen.clear()
    accept[0] = True
    box.click()
    box.fill("3")
    box.press("Enter")
    third = _wait_item(page, item)  # yes: the jump goes ahead
    assert third != item and seen == [question]
    expect(box).to_have_value("3")
    assert _stored(app["engine"], item) == {}
    ctx.close()


def test_idle_sign_out_says_unsaved_choices_are_lost_when_they_are(app):
    """Signed out for idleness on a step to another item (not on "Save and next"; the
    rater said yes to leaving the unsaved choice): the choices on the screen were never
    sent, and the sign-in page says so (it said only that nothing saved is lost); after
    signing in the item shows what was saved (nothing) — the message told the truth."""
    page = app["browser"].new_page(viewport=LAPTOP)
    item = _sign_in_and_wait(page, app["base"], app["codes"]["idle-rater"])
    page.keyboard.press("2")
    engine = app["engine"]
    settled(page)
    with write_session(engine) as s:
        for row in s.exec(select(AuthSession).join(Rater, Rater.id == AuthSession.rater_id)
                          .where(Rater.name == "idle-rater")):
            row.last_seen_at = datetime.now(UTC) - timedelta(hours=3)
            s.add(row)
    asked = _dialogs(page, accept=True)  # "… not saved yet. Leave it …?": yes
    page.get_by_test_id("stNumberInputStepUp").click()
    page.get_by_label("Access code").wait_for(timeout=60_000)
    assert [t for t, _m in asked] == ["confirm"]
    expect(page.get_by_text(re.compile(r"without activity"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"Scores you had chosen but not yet saved are lost"))
           ).to_be_visible()
    _shot(page, "rating-idle-signed-out-1440x900")
    page.get_by_label("Access code").fill(app["codes"]["idle-rater"])
    page.get_by_role("button", name="Sign in").click()
    after = _wait_item(page, None)  # the step asked for: the next item
    settled(page)
    if after != item:
        page.get_by_test_id("stNumberInputStepDown").click()
        assert _wait_item(page, after) == item
        settled(page)
    assert _form(page)["scores"] == [None] * 4  # the 2 was never sent: gone, as it said
    assert _stored(engine, item) == {}
    page.close()


TABLET_OVERLAPS = """() => {
  const boxes = [];
  const add = (name, el) => { if (el) { const r = el.getBoundingClientRect();
    if (r.width && r.height) boxes.push([name, r]); } };
  const q = s => document.querySelector(s);
  add('progress', q('[data-testid="stProgress"]'));
  add('item box', q('.st-key-h2h_item_no'));
  add('resume', q('.st-key-h2h_resume'));
  add('reply', q('[data-testid="h2h-response"]'));
  document.querySelectorAll('""" + SCALES + """').forEach((g, i) => add('scale ' + i, g));
  add('red flag', q('.st-key-h2h_rate_flag'));
  add('comment', q('.st-key-h2h_rate_comment'));
  add('save', q('.st-key-h2h_save'));
  const out = [];
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1
    && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++)
    if (hit(boxes[i][1], boxes[j][1])) out.push(boxes[i][0] + ' / ' + boxes[j][0]);
  // every option of a scale inside its scale, none over another, its text inside it
  document.querySelectorAll('""" + SCALES + """').forEach((g, i) => {
    const gr = g.getBoundingClientRect();
    const opts = Array.from(g.querySelectorAll('label[data-testid="stRadioOption"]'));
    opts.forEach((o, k) => {
      const r = o.getBoundingClientRect();
      if (r.left < gr.left - 1 || r.right > gr.right + 1) out.push('scale ' + i
          + ' option ' + k + ' sticks out of its scale');
      if (k && hit(r, opts[k - 1].getBoundingClientRect())) out.push('scale ' + i
          + ' options ' + (k - 1) + ' / ' + k);
      o.querySelectorAll('p').forEach(p => { if (p.scrollWidth > p.clientWidth + 1
          || p.scrollHeight > o.clientHeight + 1) out.push('scale ' + i + ' option ' + k
          + ' text overflows'); });
    });
  });
  // the top row: Resume's label whole, the Item box with its − / + (narrow, it hides them)
  document.querySelectorAll('.st-key-h2h_resume button, .st-key-h2h_resume button *')
    .forEach(el => { if (el.scrollWidth > el.clientWidth + 1) out.push('Resume is cut'); });
  for (const t of ['stNumberInputStepDown', 'stNumberInputStepUp']) {
    const b = document.querySelector('[data-testid="' + t + '"]');
    if (!b || !b.getBoundingClientRect().width) out.push('the Item box has no ' + t); }
  if (document.documentElement.scrollWidth > window.innerWidth) out.push('page scrolls sideways');
  document.querySelectorAll('[data-testid="stMain"] *').forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > window.innerWidth + 1 && !el.closest('.h2h-anchor-src'))
      out.push('sticks out on the right: ' + (el.dataset.testid || el.className || el.tagName));
  });
  return Array.from(new Set(out));
}"""


def test_tablet_820_scales_are_clear_and_nothing_overlaps(app):
    """At 820 px (a tablet held upright; the report found the Item box without its − / +
    and "Resume" cut to "Resu…"): the top row (progress, Item box, Resume), the reply,
    every scale, the red flag, the comment and the button lie apart, each scale is a
    one-line segmented control whose boxes hold their text, nothing sticks out on the
    right."""
    page = app["browser"].new_page(viewport={"width": 820, "height": 1180})
    _sign_in_and_wait(page, app["base"], app["codes"]["tablet-rater"])
    page.keyboard.press("4")
    page.keyboard.press("x")
    settled(page)
    _shot(page, "rating-tablet-820")
    page.locator(".st-key-h2h_item_no").scroll_into_view_if_needed()
    _shot(page, "rating-tablet-820-top")
    assert page.evaluate(SCALE_ROWS) == [1, 1, 1, 1], "a scale wraps onto several lines"
    assert page.evaluate(TABLET_OVERLAPS) == []
    page.close()


# -- issue 34: the clinician's view on a laptop screen ---------------------------------------

SMALL_LAPTOP = {"width": 1366, "height": 768}


@pytest.mark.parametrize("size", [SMALL_LAPTOP, LAPTOP], ids=["1366x768", "1440x900"])
def test_reply_scores_and_save_in_sight_together_on_a_laptop(app, size):
    """The report: at 1366 × 768 the reply started at y = 874 and Save at y = 927, so a
    rater scrolled for every item; at 1440 × 900 the reply was below the fold too. Now the
    reply, every scale and Save are in the window together, without scrolling — also once
    every dimension is scored (the chosen anchors must not push Save out) — and the context
    scrolls on its own above the reply."""
    page = app["browser"].new_page(viewport=size)
    _sign_in_and_wait(page, app["base"], app["codes"]["laptop-rater"])
    ids = f"{size['width']}x{size['height']}"

    def all_in_sight():
        settled(page)
        assert page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]')"
                             ".scrollTop") == 0
        _in_view(page.get_by_test_id("h2h-response"), page)
        _in_view(page.get_by_role("button", name="Save and next"), page)
        scales = page.locator(SCALES)
        assert scales.count() == 4
        for i in range(4):
            _in_view(scales.nth(i).locator('[role="radiogroup"]'), page)

    all_in_sight()
    _shot(page, f"rating-{ids}")
    for key in ("4", "3", "2", "5"):
        page.keyboard.press(key)
    all_in_sight()
    _shot(page, f"rating-{ids}-scored")
    # the context region scrolls by itself (the memories at its end come into view) while
    # the reply and Save stay where they are
    ctx = page.locator(".h2h-item-ctx")
    reply_top = page.get_by_test_id("h2h-response").evaluate(BOX)[0]
    ctx.hover()
    page.mouse.wheel(0, 2000)
    page.wait_for_function("() => document.querySelector('.h2h-item-ctx').scrollTop > 0")
    assert page.get_by_test_id("h2h-response").evaluate(BOX)[0] == reply_top
    all_in_sight()
    page.close()


def test_the_highlighted_levels_anchor_is_shown_while_scoring_by_keyboard(app):
    """The report: anchors showed only on hover, on choosing, or under "All anchors". A
    psychologist scoring by keyboard reads each level's anchor with ← → (the level is
    highlighted, nothing is chosen), then chooses with its number."""
    page = app["browser"].new_page(viewport=SMALL_LAPTOP)
    item = _sign_in_and_wait(page, app["base"], app["codes"]["peek-rater"])
    line = page.locator(SCALES).first.locator(".h2h-anchor-now")
    expect(line).to_contain_text("← →")  # the hint says how
    page.keyboard.press("ArrowRight")       # from before the first level: level 1
    expect(line).to_contain_text("1 · Absent")
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    expect(line).to_have_text(re.compile(r"^3 · Adequate — Acknowledges the main feeling"))
    hl = page.locator(SCALES).first.locator('label[data-h2h-peek="true"]')
    expect(hl).to_have_count(1)
    expect(hl).to_contain_text("Adequate")
    _in_view(line, page)
    _shot(page, "rating-1366x768-reading-anchors")
    assert _form(page) == {"scores": [None] * 4, "current": 0}  # read, not chosen
    page.keyboard.press("ArrowLeft")
    expect(line).to_contain_text("2 · Weak")
    page.keyboard.press("3")                # chosen by its number: the next dimension
    assert _form(page) == {"scores": ["3", None, None, None], "current": 1}
    expect(line).to_contain_text("3 · Adequate")  # the chosen level's anchor stays
    expect(hl).to_have_count(0)
    second = page.locator(SCALES).nth(1).locator(".h2h-anchor-now")
    page.keyboard.press("ArrowLeft")        # from before the first, ← starts at the end
    expect(second).to_contain_text("Cannot rate")
    page.keyboard.press("ArrowLeft")
    expect(second).to_contain_text("5 · Exemplary")
    assert _stored(app["engine"], item) == {}
    page.close()


def test_adjudication_shows_persona_memories_and_schedule(app):
    """The report: an admin adjudicated iti-011-birch on Plan quality without the schedule
    or the memory "drinks too much when upset". The item shows as the raters saw it."""
    page = app["browser"].new_page(viewport=SMALL_LAPTOP)
    page.goto(app["base"])
    page.get_by_label("Access code").fill(app["admin_code"])
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Adjudication").click()
    box = page.get_by_test_id("stSelectbox").filter(has_text="Disagreement")
    box.wait_for(timeout=60_000)
    settled(page)
    box.click()
    option = page.get_by_role("option").filter(has_text=re.compile(r"^iti-")).first
    picked, label = option.inner_text().split(" · ")[:2]
    option.click()
    settled(page)
    with app["engine"].connect() as c:
        ctx = json.loads(c.execute(sa.text("SELECT context FROM item WHERE id = :i"),
                                   {"i": picked}).scalar_one())
    assert ctx["schedule"] and ctx["memories"] and ctx["persona"]
    for title, text in (("Companion persona", ctx["persona"]), ("Schedule", ctx["schedule"]),
                        ("Memories from earlier sessions", ctx["memories"][0])):
        panel = page.locator("details.h2h-ctx", has_text=title)
        expect(panel).to_have_attribute("open", "")
        expect(panel).to_contain_text(text[:40])
    expect(page.get_by_test_id("h2h-response")).to_be_visible()
    # the scale carries its level names and anchors; the scores table has no index column
    from data.study import current_rubric

    dim = next(d for d in current_rubric(app["engine"]).dimensions if d.label == label)
    radio = page.get_by_role("radiogroup").last
    for lv in (dim.levels[0], dim.levels[-1]):
        expect(radio).to_contain_text(lv.label)
        expect(radio).to_contain_text(lv.anchor[:40])
    assert page.locator('[data-testid="stTable"] th', has_text=re.compile(r"^0$")).count() == 0
    _shot(page, "adjudication-1366x768")
    page.close()

"""The coordinator's pages in Chromium at 1366 × 768 (issue 34): the Agreement page draws its
charts, and no table on Agreement, Progress, Rater quality or the Overview is clipped — every
column and every flag is on screen, wrapped if need be, never cut at the page's edge."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, served, settled

pytestmark = pytest.mark.browser
SMALL_LAPTOP = {"width": 1366, "height": 768}

# every table of the page: its content as wide as its box (nothing hidden to scroll or cut),
# and its box inside the window
CLIPPED = """() => Array.from(document.querySelectorAll(
    '[data-testid="stTable"], [data-testid="stDataFrame"]')).map(t => {
  const r = t.getBoundingClientRect();
  // a static table: its <table> wider than its box; a data grid: its scroller scrolls sideways
  const grid = t.dataset.testid === 'stDataFrame';
  const inner = grid ? t.querySelector('.dvn-scroller') : t.querySelector('table');
  return {what: (t.textContent || '').slice(0, 40), right: r.right,
          wide: !!inner && inner.scrollWidth > inner.clientWidth + 1,
          cells: grid ? [] : Array.from(t.querySelectorAll('td, th')).filter(
            c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 40))};
}).filter(t => t.wide || t.right > window.innerWidth || t.cells.length)"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adminpages")
    db = tmp / "demo.db"
    out = subprocess.run([sys.executable, "-m", "annotate.cli", "demo", "--db", str(db)],
                         check=True, capture_output=True, text=True).stdout
    code = re.search(r"Admin code \(demo-admin\): (H2H-[A-Z0-9-]+)", out).group(1)
    with served(db, tmp / "serve.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=SMALL_LAPTOP)
        page.goto(base)
        page.get_by_label("Access code").fill(code)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_test_id("stSidebarNav").wait_for(timeout=60_000)
        yield page
        browser.close()


def _open(page, link: str, heading: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=link).click()
    page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=120_000)
    settled(page, timeout=180_000)


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_agreement_draws_its_charts_and_no_table_is_clipped(app):
    _open(app, "Agreement", "Agreement")
    charts = app.locator('[data-testid="stPlotlyChart"] .main-svg')
    expect(charts.first).to_be_visible()
    assert app.locator('[data-testid="stPlotlyChart"]').count() == 3  # humans, judges, raters
    # the humans' chart: a point per dimension and series, the bands behind them
    humans = app.locator('[data-testid="stPlotlyChart"]').first
    assert humans.locator(".scatterlayer .point").count() == 15  # 5 dimensions × α, κ, QWK
    expect(humans).to_contain_text("reliable ≥ .800")
    assert app.evaluate(CLIPPED) == []
    # a flag is read whole: the rater severity tables wrap, they do not cut "overfit (too …"
    flags = app.get_by_text(re.compile(r"^(overfit|misfit) \("))
    for i in range(flags.count()):
        if flags.nth(i).is_visible():
            box = flags.nth(i).bounding_box()
            assert box["x"] + box["width"] <= SMALL_LAPTOP["width"]
    _shot(app, "agreement-1366x768")


@pytest.mark.parametrize("link,heading", [("Overview", "H2HTalk demo study"),
                                          ("Progress", "Progress"),
                                          ("Rater quality", "Rater quality")])
def test_the_coordinators_pages_lead_with_a_chart_and_clip_no_table(app, link, heading):
    _open(app, link, heading)
    expect(app.locator('[data-testid="stPlotlyChart"] .main-svg').first).to_be_visible()
    assert app.evaluate(CLIPPED) == []
    _shot(app, f"{link.lower().replace(' ', '-')}-1366x768")

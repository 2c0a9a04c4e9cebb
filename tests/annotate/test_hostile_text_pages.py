"""Every text that came from a file is inert on every page, admin pages included (the report:
the Adjudication page rendered an item's ``model`` as Markdown, and
``![m](http://127.0.0.1:1/model.png)`` made the browser fetch it).

A study whose every file-borne field is hostile — item id, scenario, model, condition,
reply, conversation, persona, memories, schedule, outfit, reference, metadata, rater names
(as an older study could hold them), the rubric's name, labels, anchors and guidelines, the
study's name, an uploaded file's name, a judge's reasoning — each pointing at a local
sniffer. An admin and a rater visit every page in Chromium: the sniffer gets 0 requests, no
request names a planted file, no script runs, and the texts show as the characters written.

Every long text also carries the payload corpus of :mod:`tests.annotate.hostile_corpus`
(issue 36: nested, escaped and reference-style images in rubric Markdown, raw HTML, SVG, CSS
``url()``, ``javascript:`` links, entities, tables …), and every one-line name a
``<span style="background-image:url(…)">`` that Plotly would read as HTML. One served app for
the module; one browser context per person (admin, rater, trainee).
"""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from playwright.sync_api import sync_playwright

from data import norming as nm
from data import quality as q
from data.engine import get_engine, write_session
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Assignment, Rater, Rating, utcnow
from data.raters import add_rater
from data.rubric import load_default_rubric, rubric_from_definition
from data.study import init_study, set_rubric
from judge.simulate import add_simulated_judges
from tests.annotate.hostile_corpus import MARK, one_line
from tests.annotate.hostile_corpus import text as corpus_text
from tests.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, served, settled, sniffer, upload_file

pytestmark = pytest.mark.browser


def evil(p: str, what: str, link: bool = True, full: bool = True) -> str:
    """Markdown image, HTML image with a script, Streamlit directive, bare URL, math, and
    (except in rubric text, whose explicit [links](url) are kept on purpose) a link to the
    sniffer; then (``full``) the whole payload corpus, whose kept links go elsewhere."""
    return (f"{what} ![x]({p}/{what}.png) <img src={p}/{what}-html.png "
            f"onerror=\"window.__{MARK}=1\"> :red[{what}] {p}/{what}-bare "
            + (f"[{what}]({p}/{what}-link) " if link else "")
            + f"$\\href{{{p}/{what}-tex}}{{x}}$ ![r]({MARK}-{what}.png)"
            + (f"\n\n{corpus_text(p, what)}" if full else ""))


def short(p: str, what: str) -> str:
    """For fields of at most 100 characters: a Markdown and an HTML image."""
    return f"{what} ![x]({p}/{what}.png) <img src={p}/{what}-html.png>"


def _hostile_rubric(p: str):
    d = load_default_rubric().definition()
    d["name"] = evil(p, "rubric-name", full=False) + " " + one_line(p, "rubric-name")
    d["guidelines"] = evil(p, "guidelines", link=False)
    for dim in d["dimensions"]:
        # Admin › Progress draws the labels in a Plotly figure, which reads HTML
        dim["label"] = (dim["label"] + " " + evil(p, f"label-{dim['key']}", full=False) + " "
                        + one_line(p, f"label-{dim['key']}"))
        dim["description"] = evil(p, f"description-{dim['key']}", link=False)
        for lv in dim["levels"]:
            lv["label"] = lv["label"] + evil(p, "level", full=False) + one_line(p, "level")
            lv["anchor"] = evil(p, f"anchor-{dim['key']}-{lv['value']}", link=False)
    return rubric_from_definition(d)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    with sniffer() as (base_p, hits):
        yield from _hostile(tmp_path_factory, base_p, hits)


def _hostile(tmp_path_factory, p: str, hits: list[str]):
    tmp = tmp_path_factory.mktemp("hostile")
    db = tmp / "hostile.db"
    engine = get_engine(db)
    init_study(engine, name=evil(p, "study-name"), description=evil(p, "study-description"))
    # the rubric as an older study could hold it (imports now refuse images in rubric text)
    set_rubric(engine, _hostile_rubric(p))
    item_id = f"{MARK}-item ![i]({p}/item-id.png)"
    rec = ItemRecord.model_validate({
        "id": item_id, "task": "dialogue", "scenario": short(p, "scenario"),
        "context": {"persona": evil(p, "persona"), "memories": [evil(p, "memory")],
                    "schedule": evil(p, "schedule"), "outfit": evil(p, "outfit"),
                    "turns": [{"role": "user", "text": evil(p, "turn")}]},
        "response": evil(p, "response"), "model": short(p, "model"),
        "condition": short(p, "cond"), "reference": evil(p, "reference"),
        "metadata": {evil(p, "meta-key"): evil(p, "meta-value")}})
    gold_id = f"{MARK}-gold ![g]({p}/gold-id.png)"
    gold = ItemRecord.model_validate({**rec.model_dump(), "id": gold_id,
                                      "response": evil(p, "gold-response")})
    import_item_records(engine, [rec, gold], file="hostile.jsonl")
    _, admin_code = add_rater(engine, "ada", "admin")
    pat, pat_code = add_rater(engine, "pat", "rater")
    _, tia_code = add_rater(engine, "tia", "rater")  # trains on the gold item first
    rub = _hostile_rubric(p)
    with write_session(engine) as s:  # names an older study could hold (imported unchecked)
        names = [f"![r]({p}/rater.png)", f"<img src={p}/rater-html.png>", "kim",
                 one_line(p, "rater-name")]
        raters = [Rater(name=n, role="rater") for n in names]
        s.add_all(raters)
        s.flush()
        for r, score in zip(raters, (1, 5, 3, 2), strict=True):
            for dim in ("empathy", "safety", "fluency"):
                s.add(Rating(rater_id=r.id, item_id=item_id, dimension=dim, score=score,
                             comment=evil(p, "comment"), rubric_version=rub.version,
                             created_at=utcnow(), updated_at=utcnow()))
    with write_session(engine) as s:
        s.add(Assignment(rater_id=pat.id, item_id=item_id, position=0))
    for dim in ("empathy", "safety", "fluency"):
        q.set_gold(engine, gold_id, dim, 3, evil(p, f"rationale-{dim}"), source="import")
    q.save_settings(engine, training_count=1)
    q.release(engine, "pat", None, evil(p, "release-note"))
    sid = nm.create_session(engine, evil(p, "norming-name")[:200], [item_id],
                            ["pat", names[0], names[1]])
    for name in names[:2]:
        with engine.connect() as c:
            rid = c.execute(sa.text("SELECT id FROM rater WHERE name = :n"), {"n": name}
                            ).scalar_one()
        nm.save_norming(engine, sid, rid, item_id, {"empathy": 2, "safety": 3, "fluency": 4})
    nm.reveal(engine, sid, named=True)
    add_simulated_judges(engine, rub, seed=1)
    with engine.begin() as c:
        c.execute(sa.text("UPDATE judgment SET reasoning = :r, raw_reply = :r, score = 1 "
                          "WHERE item_id = :i"), {"r": evil(p, "judge-reasoning"), "i": item_id})
    with served(db, tmp / "serve.log") as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield {"base": base, "p": p, "hits": hits, "browser": browser, "item_id": item_id,
               "admin_code": admin_code, "rater_code": pat_code, "trainee_code": tia_code,
               "tmp": tmp}
        browser.close()
    engine.dispose()


class Watch:
    """Everything the page asks the network for, and every dialog it opens."""

    def __init__(self, page):
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))


# any element that would make the browser fetch a planted address, or link to the sniffer
# (a link may carry an item id, which holds MARK, in its query: only the sniffer's is wrong)
_REFERS = """([p, mark]) => [...document.querySelectorAll('*')].filter(e =>
    ['src', 'srcset', 'poster', 'data', 'style', 'background', 'href', 'xlink:href', 'action',
     'formaction', 'ping', 'content'].some(a => {
        const v = e.getAttribute(a) || '';
        return v.includes(p) || (a !== 'href' && v.includes(mark));
    }) || (e.tagName === 'STYLE' && (e.textContent.includes(p)
                                      || e.textContent.includes(mark))))
    .map(e => e.outerHTML.slice(0, 200))"""
# a link that would run a script or open a document made of the link itself when clicked
_UNSAFE_LINKS = """() => [...document.querySelectorAll('a[href], area[href]')].filter(a =>
    !['http:', 'https:', 'mailto:', 'blob:'].includes(a.protocol))
    .map(a => a.outerHTML.slice(0, 200))"""


def _check(page, watch: Watch, hostile, name: str) -> None:
    settled(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"40-hostile-{name}.png"), full_page=True)
    assert page.locator('[data-testid="stException"]').count() == 0, name
    assert hostile["hits"] == [], f"{name}: the browser fetched {hostile['hits']}"
    planted = [u for u in watch.requests if MARK in u or hostile["p"] in u]
    assert planted == [], f"{name}: requests for planted URLs {planted}"
    assert watch.dialogs == [] and page.evaluate(f"() => window.__{MARK}") is None, name
    # the page is drawn in full (see _settle): no element refers to a planted address, so
    # none can be fetched later either (the request checks above hold what was fetched)
    assert page.evaluate(_REFERS, [hostile["p"], MARK]) == [], name
    assert page.evaluate(_UNSAFE_LINKS) == [], name


def _sign_in(page, base: str, code: str) -> None:
    page.goto(base)
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()


# each admin page's link and the heading only that page draws (Overview's is the study name)
ADMIN_PAGES = {"Overview": None, "Guidelines": "Guidelines", "Raters": "Raters",
               "Assignment": "Assignment", "Progress": "Progress", "Agreement": "Agreement",
               "Adjudication": "Adjudication", "Rater quality": "Rater quality",
               "Norming": "Norming", "Calibration": "Judge calibration", "Export": "Export"}


def test_admin_pages_render_file_text_inert(hostile):
    page = hostile["browser"].new_page(viewport={"width": 1400, "height": 1200})
    watch = Watch(page)
    _sign_in(page, hostile["base"], hostile["admin_code"])
    page.get_by_role("link", name="Overview").wait_for(timeout=60_000)
    p = hostile["p"]
    for name, heading in ADMIN_PAGES.items():
        page.get_by_role("link", name=name, exact=True).click()
        if heading is None:
            page.get_by_role("heading", name=f"study-name ![x]({p}/study-name.png)",
                             exact=False).first.wait_for(timeout=60_000)
        else:
            page.get_by_role("heading", name=heading, exact=True).first.wait_for(
                timeout=60_000)
        _check(page, watch, hostile, name.lower())
        if name == "Overview":  # the study's name shows as written
            assert page.get_by_text(f"study-name ![x]({p}/study-name.png)").count() >= 1
        if name == "Adjudication":  # the model caption that used to fetch model.png
            page.get_by_text(f"model ![x]({p}/model.png)", exact=False).first.wait_for()
            page.get_by_text(f"![r]({p}/rater.png)").first.wait_for()
        if name == "Calibration":  # the one item, its reply and the judge's reasoning
            shown = page.get_by_test_id("h2h-response").inner_text()
            assert f"response ![x]({p}/response.png)" in shown
            page.get_by_text(f"judge-reasoning ![x]({p}/judge-reasoning.png)",
                             exact=False).first.wait_for()
    # an uploaded file's name is file text too
    page.get_by_role("link", name="Import", exact=True).click()
    upload = hostile["tmp"] / f"{MARK}-upload ![u]({MARK}-upload.png) <b>x<b>.jsonl"
    upload.write_text('{"id": "a", "task": "poetry"}\n', encoding="utf-8")
    upload_file(page, "Items file", upload)
    page.get_by_text("x<b>.jsonl").first.wait_for(timeout=30_000)  # the name, shortened
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text("was rejected; nothing was imported").wait_for(timeout=60_000)
    _check(page, watch, hostile, "import")
    assert page.get_by_text(f"![u]({MARK}-upload.png) <b>x<b>.jsonl was rejected",
                            exact=False).count() == 1
    # the report's verdicts
    page.get_by_role("link", name="Report", exact=True).click()
    page.get_by_role("heading", name="Report").wait_for(timeout=60_000)
    page.get_by_text("Export figures (PDF, SVG, PNG)").click()
    page.get_by_role("button", name="Build report").click()
    page.get_by_role("button", name="Download report (zip)").wait_for(timeout=300_000)
    _check(page, watch, hostile, "report")
    page.close()


def test_rater_pages_render_rubric_and_item_text_inert(hostile):
    page = hostile["browser"].new_page(viewport={"width": 1400, "height": 1200})
    watch = Watch(page)
    _sign_in(page, hostile["base"], hostile["rater_code"])
    page.get_by_test_id("h2h-response").wait_for(timeout=60_000)
    _check(page, watch, hostile, "rate")
    p = hostile["p"]
    assert f"response ![x]({p}/response.png)" in page.get_by_test_id("h2h-response").inner_text()
    page.get_by_text(f"label-empathy ![x]({p}/label-empathy.png)", exact=False).first.wait_for()
    for tip in page.locator('[data-testid="stTooltipIcon"]').all()[:2]:  # anchors in tooltips
        tip.hover()
        page.get_by_test_id("stTooltipContent").last.wait_for(timeout=30_000)
    _check(page, watch, hostile, "rate-tooltips")
    page.get_by_role("link", name="Guidelines").click()
    page.get_by_text(f"guidelines ![x]({p}/guidelines.png)", exact=False).first.wait_for()
    _check(page, watch, hostile, "guidelines")
    # the corpus's images show as the characters written, its formatting as formatting
    r = p.removeprefix("http:")
    page.get_by_text(f"![a[b]c]({r}/{MARK}-guidelines-nested.png)").first.wait_for()
    page.get_by_role("link", name="the manual").first.wait_for()
    page.close()


def test_rater_norming_and_training_pages_render_file_text_inert(hostile):
    p = hostile["p"]
    page = hostile["browser"].new_page(viewport={"width": 1400, "height": 1200})
    watch = Watch(page)
    _sign_in(page, hostile["base"], hostile["rater_code"])
    page.get_by_test_id("h2h-response").first.wait_for(timeout=60_000)
    page.get_by_role("link", name="Norming").click()
    page.get_by_test_id("h2h-norming-ready").wait_for(state="attached", timeout=60_000)
    _check(page, watch, hostile, "norming-rater")
    page.get_by_text(f"![r]({p}/rater.png)").first.wait_for()  # named participants, inert
    page.close()

    page = hostile["browser"].new_page(viewport={"width": 1400, "height": 1200})
    watch = Watch(page)
    _sign_in(page, hostile["base"], hostile["trainee_code"])
    page.get_by_test_id("h2h-training-ready").wait_for(state="attached", timeout=60_000)
    _check(page, watch, hostile, "training")
    assert f"gold-response ![x]({p}/gold-response.png)" in \
        page.get_by_test_id("h2h-response").inner_text()
    groups = page.locator('div[data-testid="stRadio"]')
    for i in range(groups.count()):
        groups.nth(i).locator('div[role="radiogroup"] label').filter(
            has_text=re.compile(r"^3 ")).click()
    page.get_by_role("button", name="Submit and see the experts' scores").click()
    page.get_by_test_id("h2h-feedback").wait_for(timeout=60_000)
    _check(page, watch, hostile, "training-feedback")
    assert f"rationale-empathy ![x]({p}/rationale-empathy.png)" in \
        page.get_by_test_id("h2h-feedback").inner_text()
    page.close()

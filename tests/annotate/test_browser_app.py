"""What a person does, in Debian's Chromium against the real `h2h serve`: sign in, rate by
mouse and keyboard, reload and resume, revise, stay in their lane, see model text inert, and
(as admin) upload a bad file. A screenshot of every page goes to test-artifacts/."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect, sync_playwright

from data.engine import get_engine, write_session
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Assignment
from data.quality import release
from data.raters import add_rater
from tests.browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    served,
    session_cookie,
    settled,
    sniffer,
    upload_file,
)

pytestmark = pytest.mark.browser
MODEL_WORDS = ("aster-70b", "birch-8b", "cedar-1b", "baseline")


@pytest.fixture(scope="module")
def app(tmp_path_factory, demo_template):
    with sniffer() as (sniff_base, hits):
        yield from _app(tmp_path_factory, demo_template, sniff_base, hits)


def _app(tmp_path_factory, demo_template, sniff_base: str, hits: list[str]):
    tmp = tmp_path_factory.mktemp("app")
    db = demo_template.copy_to(tmp)
    codes = {"Rater": demo_template.codes["demo-rater"],
             "Admin": demo_template.codes["demo-admin"]}
    engine = get_engine(db)
    evil = (f"Sure! <script>alert('xss')</script>\n<img src=\"{sniff_base}/"
            f"html.png\" onerror=\"alert(1)\">\n![tracker]({sniff_base}/md.png)"
            "\n第二行：我在这里。")
    rec = ItemRecord.model_validate({
        "id": "xss-1", "task": "dialogue", "context": {"turns": [
            {"role": "user", "text": "Say something <b>bold</b>"}]},
        "response": evil, "model": "aster-70b", "condition": "sap"})
    import_item_records(engine, [rec], file="evil.jsonl")
    other, other_code = add_rater(engine, "rater-b", "rater")
    with write_session(engine) as s:
        s.add(Assignment(rater_id=other.id, item_id="xss-1", position=1))
    # the demo trains demo-rater first (test_browser_quality.py walks that); these tests
    # are about rating, so an admin releases both raters
    release(engine, "demo-rater")
    release(engine, "rater-b")
    with served(db, tmp / "serve.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield {"base": base, "db": db, "engine": engine, "browser": browser,
               "rater_code": codes["Rater"], "admin_code": codes["Admin"],
               "other_code": other_code, "sniffer_hits": hits}
        browser.close()
    engine.dispose()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _sign_in(page, base: str, code: str) -> None:
    page.goto(base)
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()


def _progress(page) -> str:
    loc = page.get_by_text(re.compile(r"\d+ of \d+ done"))
    loc.wait_for(timeout=30_000)
    return loc.inner_text()


def _wait_done(page, n: int) -> None:
    page.get_by_text(re.compile(rf"^{n} of \d+ done")).wait_for(timeout=30_000)


def _item_marker(page, previous: str | None = None) -> str:
    """The rating form's end marker (drawn after every widget of the item) once it names an
    item other than ``previous``; returns that item's assignment id."""
    handle = page.wait_for_function(
        """prev => { const r = document.querySelector('[data-testid="h2h-ready"]');
                     return r && r.dataset.item !== prev ? r.dataset.item : null; }""",
        arg=previous, timeout=30_000)
    return handle.json_value()


def _n_dims(page) -> int:
    """The number of dimensions on the current item (call once its marker is drawn)."""
    settled(page)
    return page.locator('div[data-testid="stRadio"]').count()


def _option(page, i: int, label: str):
    return page.locator('div[data-testid="stRadio"]').nth(i).locator(
        'div[role="radiogroup"] label').filter(has_text=re.compile(rf"^{label} "))


def _click_scores(page, scores: list[str]) -> None:
    for i, label in enumerate(scores):
        _option(page, i, label).click()
        expect(_option(page, i, label).locator("input")).to_be_checked()


def test_rater_journey(app):
    page = app["browser"].new_page(viewport={"width": 1400, "height": 1000})
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on(
        "framereceived", lambda f: frames.append(f if isinstance(f, str)
                                                 else f.decode("latin-1"))))
    page.goto(app["base"])
    page.get_by_label("Access code").wait_for()
    _shot(page, "01-sign-in")
    page.get_by_label("Access code").fill("H2H-NOPE-NOPE-NOPE-NOPE")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("That code did not work")).to_be_visible()
    page.get_by_label("Access code").fill(app["rater_code"])
    page.get_by_role("button", name="Sign in").click()
    assert _progress(page).startswith("0 of ")
    _shot(page, "02-rate")

    # item 1: keyboard only, once the shortcut listener is installed and has highlighted the
    # first dimension
    current = _item_marker(page)
    n = _n_dims(page)
    page.wait_for_function("""() => document.documentElement.dataset.h2hKeys === 'ready'
        && document.querySelector('div[data-testid="stRadio"]')
             .dataset.h2hCurrent === 'true'""", timeout=30_000)
    for i, key in enumerate("4534"[:n]):
        page.keyboard.press(key)
        expect(_option(page, i, key).locator("input")).to_be_checked()
    page.keyboard.press("Enter")
    _wait_done(page, 1)
    # items 2 and 3: mouse
    for done in (2, 3):
        page.get_by_text(re.compile(rf"item {done}$")).wait_for(timeout=30_000)
        current = _item_marker(page, current)
        _click_scores(page, ["3"] * _n_dims(page))
        page.get_by_role("button", name="Save and next").click()
        _wait_done(page, done)
    with app["engine"].connect() as c:
        rows = c.execute(sa.text(
            "SELECT a.position, r.dimension, r.score FROM rating r JOIN rater x ON "
            "x.id = r.rater_id JOIN assignment a ON a.rater_id = x.id AND a.item_id = r.item_id"
            " WHERE x.name = 'demo-rater' ORDER BY a.position, r.dimension")).all()
    first_pos = min(p for p, _, _ in rows)
    kb = {d: s for p, d, s in rows if p == first_pos}
    # keys 4, 5, 3, 4 go to the item's dimensions in order: empathy, safety, fluency, then
    # the task's own dimension (memory fidelity or plan quality) if it has one
    expected = {"empathy": 4, "safety": 5, "fluency": 3}
    assert kb == {d: expected.get(d, 4) for d in kb}, "keyboard scores on the wrong dimension"
    assert len({p for p, _, _ in rows}) == 3

    # reload: still signed in, resumes at the first unfinished item
    page.reload()
    assert _progress(page).startswith("3 of ")
    assert "item 4" in _progress(page)

    # step back with the item box's − button, then type 1 to jump to the first item
    page.get_by_test_id("stNumberInputStepDown").click()
    page.get_by_text(re.compile(r"item 3$")).wait_for(timeout=30_000)
    settled(page)  # a number typed while the step's run is drawing is lost
    box = page.get_by_test_id("stNumberInputField")
    box.fill("1")
    box.press("Enter")
    page.get_by_text(re.compile(r"item 1$")).wait_for(timeout=30_000)
    page.get_by_text("You already saved this item").wait_for()
    _click_scores(page, ["2"])
    page.get_by_role("button", name="Save and next").click()
    page.get_by_text(re.compile(r"item 2$")).wait_for(timeout=30_000)
    with app["engine"].connect() as c:
        revs = c.execute(sa.text(
            "SELECT v.score FROM rating_revision v JOIN rating r ON r.id = v.rating_id JOIN "
            "rater x ON x.id = r.rater_id JOIN assignment a ON a.rater_id = x.id AND "
            "a.item_id = r.item_id WHERE x.name = 'demo-rater' AND a.position = :p AND "
            "r.dimension = 'empathy' ORDER BY v.id"), {"p": first_pos}).all()
    assert [r[0] for r in revs] == [4.0, 2.0]

    # the run that drew item 2 has ended before the link is clicked: a click during it can be
    # lost when the run finishes (seen once under load: the Guidelines heading never came)
    settled(page)
    page.get_by_role("link", name="Guidelines").click()
    page.get_by_role("heading", name="Guidelines").wait_for(timeout=60_000)
    _shot(page, "03-guidelines")
    text = " ".join(frames) + page.content()
    for w in MODEL_WORDS:
        assert w not in text, f"{w!r} reached the rater's browser"
    page.close()


def test_rater_stays_in_their_lane(app):
    page = app["browser"].new_page(viewport={"width": 1400, "height": 1000})
    _sign_in(page, app["base"], app["rater_code"])
    _progress(page)
    session_cookie(page.context)
    # an admin page typed directly: not served to a rater (the session cookie signs her in)
    page.goto(f"{app['base']}/admin_raters")
    _progress(page)  # lands back on the rater's own page
    assert page.get_by_text("Add a rater or admin").count() == 0
    assert page.get_by_role("link", name="Raters").count() == 0
    _shot(page, "04-rater-typed-admin-url")
    # another rater's item by id
    page.goto(f"{app['base']}/?item=xss-1")
    expect(page.get_by_text("That item is not in your queue.")).to_be_visible(timeout=30_000)
    _shot(page, "05-rater-other-item")
    page.close()


def test_model_text_is_inert(app):
    page = app["browser"].new_page(viewport={"width": 1400, "height": 1000})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app['base']}/?code={app['other_code']}")
    box = page.get_by_test_id("h2h-response")
    box.wait_for(timeout=30_000)
    shown = box.inner_text()
    assert "<script>alert('xss')</script>" in shown
    assert "<img src=" in shown and "![tracker](http://127.0.0.1:" in shown
    assert "第二行：我在这里。" in shown
    assert shown.count("\n") >= 3  # line breaks kept
    assert box.locator("img, script, a").count() == 0
    assert page.get_by_text("Say something <b>bold</b>").count() == 1
    assert "code=" not in page.url  # the access code left the address bar
    # "nothing happened" is only meaningful once everything has happened: the form's end
    # marker is drawn, the run is over and the browser has no request left in flight
    _item_marker(page)
    settled(page)
    page.wait_for_load_state("networkidle")
    _shot(page, "06-untrusted-text")
    assert dialogs == []
    assert app["sniffer_hits"] == [], "the browser fetched something the model wrote"
    page.close()


def test_admin_pages_and_bad_upload(app, tmp_path):
    page = app["browser"].new_page(viewport={"width": 1400, "height": 1000})
    _sign_in(page, app["base"], app["admin_code"])
    page.get_by_role("heading", name="H2HTalk demo study").wait_for(timeout=30_000)
    _shot(page, "10-admin-overview")
    for i, (link, heading) in enumerate([("Raters", "Raters"), ("Assignment", "Assignment"),
                                         ("Progress", "Progress"), ("Agreement", "Agreement"),
                                         ("Adjudication", "Adjudication"),
                                         ("Rater quality", "Rater quality"),
                                         ("Norming", "Norming"),
                                         ("Export", "Export")], start=11):
        page.get_by_role("link", name=link).click()
        page.get_by_role("heading", name=heading).wait_for(timeout=30_000)
        settled(page)  # the whole page is drawn: an exception would be on screen now
        assert page.locator('[data-testid="stException"]').count() == 0
        _shot(page, f"{i}-admin-{link.lower()}")
    with app["engine"].connect() as c:
        before = c.execute(sa.text("SELECT COUNT(*) FROM item")).scalar_one()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "ok-1", "task": "dialogue", "context": {"turns": [{"role": "user", '
                   '"text": "hi"}]}, "response": "hello"}\n{"id": "ok-2", "task": "poetry", '
                   '"context": {"turns": []}, "response": "x"}\n', encoding="utf-8")
    page.get_by_role("link", name="Import").click()
    page.get_by_role("heading", name="Import").wait_for()
    upload_file(page, "Items file", bad)
    page.get_by_text("bad.jsonl").first.wait_for()
    page.get_by_role("button", name="Import", exact=True).click()
    err = page.get_by_text("bad.jsonl was rejected; nothing was imported.")
    err.wait_for(timeout=30_000)
    problems = page.locator('[data-testid="stCode"]')
    expect(problems).to_contain_text("bad.jsonl:2: field 'context.turns': needs at least one "
                                     "turn", timeout=30_000)
    _shot(page, "17-admin-import-error")
    with app["engine"].connect() as c:
        assert c.execute(sa.text("SELECT COUNT(*) FROM item")).scalar_one() == before
    page.close()


def test_a_new_rubric_shows_at_once_after_an_admin_imports_it(app, tmp_path):
    """Raters' pages share one parsed rubric per process; an import through the Import page
    makes the new version current at once (not after the rubric cache expires)."""
    from importlib import resources

    text = (resources.files("data") / "rubrics" / "companion.toml").read_text("utf-8")
    new = tmp_path / "companion_v2.toml"
    new.write_text(text.replace("## How to rate", "## How to rate (version two)"),
                   encoding="utf-8")
    page = app["browser"].new_page(viewport={"width": 1400, "height": 1000})
    _sign_in(page, app["base"], app["admin_code"])
    page.get_by_role("link", name="Guidelines").wait_for(timeout=60_000)  # signed in
    settled(page)
    page.get_by_role("link", name="Guidelines").click()
    page.get_by_role("heading", name="How to rate").wait_for(timeout=60_000)
    settled(page)
    page.get_by_role("link", name="Import").click()
    page.get_by_role("heading", name="Import").wait_for(timeout=60_000)
    page.get_by_text("Rubric", exact=True).click()
    page.get_by_text(re.compile(r"Rubric file")).wait_for()  # the uploader for rubrics
    page.get_by_text(re.compile(r"TOML")).first.wait_for()
    # the run that draws it has ended: until then the items' uploader is still on the page,
    # faded (seen under load: two file inputs)
    settled(page)
    upload_file(page, "Rubric file", new)
    page.get_by_text("companion_v2.toml").first.wait_for()
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text(re.compile(r"Rubric 'H2HTalk companion rubric' version \w+ is now "
                                "current")).wait_for(timeout=30_000)
    settled(page)
    page.get_by_role("link", name="Guidelines").click()
    page.get_by_role("heading", name="How to rate (version two)").wait_for(timeout=60_000)
    page.close()


def test_session_token_stays_out_of_the_address_bar_and_dies_at_sign_out(app):
    """The report: sign-out did not revoke the token, and the old `/?s=<token>` address
    signed the rater back in, in any browser, for 12 h. Now the token lives in a cookie
    (never in the address bar or history) and sign-out ends it in the database."""
    ctx = app["browser"].new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    _sign_in(page, app["base"], app["rater_code"])
    _progress(page)
    session_cookie(ctx)
    page.reload()
    _progress(page)  # a reload keeps the session
    cookies = [c for c in ctx.cookies() if c["name"].startswith("h2h_session_")]
    # set by the server's response, out of every script's reach (issue 36)
    assert len(cookies) == 1 and cookies[0]["sameSite"] == "Lax" and cookies[0]["httpOnly"]
    assert not cookies[0]["secure"]  # served over plain HTTP here (Secure over HTTPS)
    token = cookies[0]["value"]
    assert token not in page.evaluate("() => document.cookie")
    assert token not in page.content()  # neither the token nor any script that holds it
    history = page.evaluate("() => [location.href, document.referrer]")
    assert all(token not in h and "s=" not in h and "code=" not in h for h in history)
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Access code").wait_for(timeout=30_000)
    assert session_cookie(ctx, gone=True) is None  # deleted by the server's response
    ctx.close()
    # someone who copied the cookie before the sign-out: refused, in another browser too
    thief = app["browser"].new_context()
    thief.add_cookies([{k: cookies[0][k] for k in ("name", "value", "domain", "path")}])
    page = thief.new_page()
    page.goto(app["base"])
    page.get_by_label("Access code").wait_for(timeout=30_000)
    assert page.get_by_text(re.compile(r"\d+ of \d+ done")).count() == 0
    page.goto(f"{app['base']}/?s={token}")  # nor as the old address form
    page.get_by_label("Access code").wait_for(timeout=30_000)
    assert "s=" not in page.url
    thief.close()


def test_admin_downloads_a_consistent_backup(app, tmp_path):
    import sqlite3

    page = app["browser"].new_page(viewport={"width": 1400, "height": 1000})
    _sign_in(page, app["base"], app["admin_code"])
    page.get_by_role("heading", name="H2HTalk demo study").wait_for(timeout=30_000)
    page.get_by_role("link", name="Export").click()
    page.get_by_role("heading", name="Backup").wait_for(timeout=30_000)
    with page.expect_download(timeout=60_000) as dl:
        page.get_by_role("button", name="Study snapshot (SQLite file)").click()
    path = tmp_path / dl.value.suggested_filename
    dl.value.save_as(path)
    assert path.name.startswith("h2h-study-") and path.suffix == ".db"
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with app["engine"].connect() as c:
        want = c.execute(sa.text("SELECT COUNT(*) FROM rating")).scalar_one()
    assert con.execute("SELECT COUNT(*) FROM rating").fetchone()[0] == want
    con.close()
    page.close()


def test_forwarded_for_is_ignored_without_a_trusted_proxy(app):
    """`h2h serve` without --trusted-proxy: a client that sends its own X-Forwarded-For
    (to dodge the per-client count) is still counted as the address that connected — the
    web server under Streamlit would otherwise believe the header from any local peer."""
    ctx = app["browser"].new_context(extra_http_headers={"X-Forwarded-For": "203.0.113.66"})
    page = ctx.new_page()
    _sign_in(page, app["base"], "H2H-FFFF-2222-3333-4444")
    page.get_by_text("That code did not work").wait_for(timeout=30_000)
    with app["engine"].connect() as c:
        buckets = {b for (b,) in c.execute(sa.text(
            "SELECT bucket FROM signin_throttle WHERE bucket LIKE 'client:%'"))}
    assert "client:127.0.0.1" in buckets and "client:203.0.113.66" not in buckets
    ctx.close()

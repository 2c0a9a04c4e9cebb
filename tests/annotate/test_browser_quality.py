"""Rater quality in Debian's Chromium against the real `h2h serve` on the demo study: a rater
trains on gold items (feedback after each), fails, is sent back by the admin, passes, and
rates real items with attention checks mixed in; the admin sees attention and gold results on
the Progress page; two raters in two browser contexts hold a norming session with the admin,
who reads α before and after the discussion. Waits on the pages' ready markers, never sleeps.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect, sync_playwright

from annotate.services import norming as ns
from data import norming as nm
from data import quality as q
from data.engine import get_engine
from data.raters import add_rater
from data.study import current_rubric
from tests.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, served, settled

pytestmark = pytest.mark.browser
VIEW = {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def app(tmp_path_factory, demo_template):
    tmp = tmp_path_factory.mktemp("quality")
    db = demo_template.copy_to(tmp)
    codes = {"Rater": demo_template.codes["demo-rater"],
             "Admin": demo_template.codes["demo-admin"]}
    engine = get_engine(db)
    q.save_settings(engine, training_count=3)  # a short round keeps the test quick
    kim, kim_code = add_rater(engine, "kim", "rater")
    q.release(engine, "kim")
    _lee, lee_code = add_rater(engine, "lee", "rater")  # trains, passes, reloads
    with served(db, tmp / "serve.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield {"base": base, "engine": engine, "browser": browser, "rater": codes["Rater"],
               "admin": codes["Admin"], "kim": kim_code, "lee": lee_code}
        browser.close()
    engine.dispose()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _signed_in(browser, base: str, code: str):
    ctx = browser.new_context(viewport=VIEW)
    page = ctx.new_page()
    page.goto(f"{base}/?code={code}")
    return ctx, page


def _marker(page, testid: str, **attrs) -> None:
    sel = f'[data-testid="{testid}"]' + "".join(f'[data-{k}="{v}"]' for k, v in attrs.items())
    page.locator(sel).wait_for(state="attached", timeout=60_000)
    settled(page)  # the form's values are in place: a click now is not undone by them


def _score_groups(page, values: list[int | str], start: int = 0) -> None:
    """Click ``values[i]`` in the i-th radio group (from ``start``): "3" matches "3 · …"."""
    groups = page.locator('div[data-testid="stRadio"]')
    for i, v in enumerate(values):
        label = groups.nth(start + i).locator('div[role="radiogroup"] label').filter(
            has_text=re.compile(rf"^{v} "))
        label.click()
        expect(label.locator("input")).to_be_checked()


def _gold(engine, item_id: str) -> dict[str, int]:
    return {g.dimension: int(g.score) for g in q.gold_scores(engine) if g.item_id == item_id}


def _rater_id(engine, name: str) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT id FROM rater WHERE name = :n"), {"n": name}
                         ).scalar_one()


def _train_round(page, engine, rater_id: int, round_: int, right: bool, shot: str) -> None:
    rubric = current_rubric(engine)
    items = q.training_set(engine, rater_id, round_)
    for n, item_id in enumerate(items, start=1):
        _marker(page, "h2h-training-ready", step=f"item-{n}")
        expect(page.get_by_text(f"example {n} of {len(items)}")).to_be_visible()
        gold = _gold(engine, item_id)
        with engine.connect() as c:
            task = c.execute(sa.text("SELECT task FROM item WHERE id = :i"), {"i": item_id}
                             ).scalar_one()
        # right: the experts' scores; wrong: the far end of the scale
        vals = [(gold[d.key] if right else (1 if gold[d.key] >= 3 else 5))
                if d.key in gold else 3 for d in rubric.dimensions_for(task)]
        _score_groups(page, vals)
        page.get_by_role("button", name="Submit and see the experts' scores").click()
        _marker(page, "h2h-training-ready", step="feedback")
        fb = page.get_by_test_id("h2h-feedback")
        expect(fb).to_contain_text("Expert score")
        expect(fb).to_contain_text(next(g.rationale for g in q.gold_scores(engine)
                                        if g.item_id == item_id)[:40])
        if n == 1:
            _shot(page, f"{shot}-feedback")
        last = n == len(items)
        page.get_by_role("button", name="See my result" if last else "Next training item"
                         ).click()


def test_training_qualification_then_real_items_with_attention_checks(app):
    eng = app["engine"]
    rid = _rater_id(eng, "demo-rater")
    rctx, rater = _signed_in(app["browser"], app["base"], app["rater"])
    _marker(rater, "h2h-training-ready", step="item-1")
    _shot(rater, "30-training-item")
    assert rater.get_by_text(re.compile(r"\d+ of \d+ done")).count() == 0  # no real items yet
    _train_round(rater, eng, rid, 1, right=False, shot="31-training")
    _marker(rater, "h2h-training-ready", step="failed")
    expect(rater.get_by_text("did not yet agree closely enough")).to_be_visible()
    expect(rater.get_by_text("What happens next.")).to_be_visible()
    assert rater.locator('[data-testid="stAlertContentError"]').count() == 0  # no red box
    _shot(rater, "32-training-failed")
    assert q.qualification_of(eng, rid).status == "failed"

    # the admin sends the rater through another round from the Rater quality page
    actx, admin = _signed_in(app["browser"], app["base"], app["admin"])
    # the Overview (the admin's first page) says who is waiting, with a link to decide
    expect(admin.get_by_text("waiting for your decision")).to_be_visible(timeout=60_000)
    admin.get_by_role("link", name="Decide on the Rater quality page").click()
    admin.get_by_role("heading", name="Qualification").wait_for(timeout=60_000)
    admin.get_by_test_id("stSelectbox").filter(has_text="Rater").click()
    admin.get_by_role("option", name="demo-rater").click()
    admin.get_by_role("button", name="Another training round").click()
    expect(admin.get_by_text("demo-rater goes through another training round.")
           ).to_be_visible(timeout=60_000)
    _shot(admin, "33-admin-retrain")
    assert q.qualification_of(eng, rid).round == 2

    rater.reload()
    _train_round(rater, eng, rid, 2, right=True, shot="34-training-again")
    _marker(rater, "h2h-training-ready", step="passed")
    expect(rater.get_by_text("You passed the training round")).to_be_visible()
    _shot(rater, "35-training-passed")
    rater.get_by_role("button", name="Start rating").click()
    rater.get_by_text(re.compile(r"^0 of \d+ done · item 1$")).wait_for(timeout=60_000)

    # items 1-3 are real, item 4 is an attention check (demo seed), item 5 real again
    with eng.connect() as c:
        queue = c.execute(sa.text("SELECT position, item_id, kind FROM assignment WHERE "
                                  "rater_id = :r ORDER BY position"), {"r": rid}).all()
    kinds = [k for _, _, k in queue]
    first_check = kinds.index("attention") + 1
    second_check = kinds.index("attention", first_check) + 1
    assert first_check > 1
    for number in dict.fromkeys((1, first_check - 1, first_check, first_check + 1,
                                 second_check)):
        settled(rater)  # a jump typed while the last save's run is drawing is lost (seen in CI)
        box = rater.get_by_test_id("stNumberInputField")
        box.fill(str(number))
        box.press("Enter")
        rater.get_by_text(re.compile(rf"item {number}$")).wait_for(timeout=60_000)
        settled(rater)  # the previous item's radios are gone, this one's values in place
        n_dims = rater.locator('div[data-testid="stRadio"]').count()
        is_check = kinds[number - 1] == "attention"
        response = rater.get_by_test_id("h2h-response").inner_text()
        if is_check:
            assert "choose 2 on every dimension" in response
            # nothing on the page tells a check apart: same widgets, no label saying so
            assert rater.get_by_text(re.compile("attention", re.I)).count() == 0
            _shot(rater, f"36-attention-check-{number}")
            # the first check is answered as asked; the second one wrongly
            _score_groups(rater, [2 if number == first_check else 4] * n_dims)
        else:
            _score_groups(rater, [3] * n_dims)
        rater.get_by_role("button", name="Save and next").click()
        rater.get_by_text(re.compile(rf"item {number + 1}$")).wait_for(timeout=60_000)
    with eng.connect() as c:
        rated = c.execute(sa.text("SELECT DISTINCT item_id FROM rating WHERE rater_id = :r"),
                          {"r": rid}).scalars().all()
        att = dict(c.execute(sa.text("SELECT item_id, passed FROM attention_result WHERE "
                                     "rater_id = :r"), {"r": rid}).all())
    by_pos = {p: i for p, i, _ in queue}
    assert sorted(rated) == sorted(by_pos[n] for n in (1, first_check - 1, first_check + 1))
    assert {k: bool(v) for k, v in att.items()} == {by_pos[first_check]: True,
                                                    by_pos[second_check]: False}

    # the Progress page: gold accuracy, attention pass rate, the failed check with its time
    admin.get_by_role("link", name="Progress").click()
    _marker(admin, "h2h-progress-ready")
    table = admin.get_by_test_id("stTable").filter(has_text="Gold within one")
    row = table.locator("tr").filter(has_text="demo-rater")
    expect(row).to_contain_text("passed")
    expect(row).to_contain_text("1/2")  # attention: passed of answered
    expect(row).to_contain_text("100%")  # round 2 matched gold exactly
    expect(admin.get_by_text("demo-rater: 1 attention check(s) failed")).to_be_visible()
    admin.get_by_text("Failed attention checks (1)").click()
    fails = admin.get_by_test_id("stTable").filter(has_text=by_pos[second_check])
    expect(fails).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"))
    _shot(admin, "37-progress-quality")
    rctx.close()
    actx.close()


def test_norming_session_two_raters_alpha_before_and_after(app):
    eng = app["engine"]
    rubric = current_rubric(eng)
    items = ["dlg-001-aster", "dlg-001-cedar"]
    sid = nm.create_session(eng, "Norming before the main study", items, ["demo-rater", "kim"])
    q.release(eng, "demo-rater")  # whatever the other test left, this one rates
    ctx_a, ra = _signed_in(app["browser"], app["base"], app["rater"])
    ctx_b, rb = _signed_in(app["browser"], app["base"], app["kim"])
    n_dims = len(rubric.dimensions_for("dialogue"))
    blind = {ra: [[4] * n_dims, [2] * n_dims], rb: [[3] * n_dims, [2] * n_dims]}
    for page in (ra, rb):
        page.get_by_role("link", name="Norming").click()
        _marker(page, "h2h-norming-ready", status="blind", before=0)
        assert page.get_by_test_id("stTable").count() == 0  # blind: no one else's scores
        for i, vals in enumerate(blind[page]):
            _score_groups(page, vals, start=i * n_dims)
            page.get_by_role("button", name="Save my scores").nth(i).click()
            _marker(page, "h2h-norming-ready", status="blind", before=i + 1)
    _shot(ra, "40-norming-blind")

    actx, admin = _signed_in(app["browser"], app["base"], app["admin"])
    admin.get_by_role("link", name="Norming").click()
    _marker(admin, "h2h-admin-norming-ready", status="blind")
    admin.get_by_role("button", name="Reveal scores to the group").click()
    _marker(admin, "h2h-admin-norming-ready", status="discuss")

    # after the reveal both raters see everyone's scores, anonymised, beside the anchors
    ra.reload()
    _marker(ra, "h2h-norming-ready", status="discuss")
    first = ra.get_by_test_id("stTable").first
    expect(first).to_contain_text("Rater A")
    expect(first).to_contain_text("Rater B")
    assert "kim" not in first.inner_text()
    _shot(ra, "41-norming-revealed")
    rb.reload()
    _marker(rb, "h2h-norming-ready", status="discuss", after=0)
    _score_groups(rb, [4] * n_dims)  # kim comes round to demo-rater's view on reply 1
    rb.get_by_role("button", name="Save my re-score").first.click()
    _marker(rb, "h2h-norming-ready", status="discuss", after=1)

    rows = {r.dimension: r for r in ns.norming_alpha(eng, sid, rubric)}
    emp = rows["Empathy"]
    assert emp.before is not None and emp.after == pytest.approx(1.0) and emp.before < 1.0
    admin.reload()
    _marker(admin, "h2h-admin-norming-ready", status="discuss")
    alpha = admin.get_by_test_id("stTable").filter(has_text="α before")
    erow = alpha.locator("tr").filter(has_text="Empathy")
    expect(erow).to_contain_text(f"{emp.before:.3f}")
    expect(erow).to_contain_text("1.000")
    _shot(admin, "42-norming-alpha")
    for c in (ctx_a, ctx_b, actx):
        c.close()


def test_the_training_result_survives_a_reload(app):
    """A rater who passed and reloaded the page (or came back later) went straight to the
    study's items without ever seeing the result; it now stays until "Start rating"."""
    eng = app["engine"]
    rid = _rater_id(eng, "lee")
    ctx, page = _signed_in(app["browser"], app["base"], app["lee"])
    _train_round(page, eng, rid, 1, right=True, shot="35-training-lee")
    _marker(page, "h2h-training-ready", step="passed")
    for _load in range(2):
        page.reload()
        _marker(page, "h2h-training-ready", step="passed")
        expect(page.get_by_text("You passed the training round")).to_be_visible()
    page.get_by_role("button", name="Start rating").click()
    expect(page.get_by_text("No items are assigned to you yet")).to_be_visible(timeout=60_000)
    page.reload()
    expect(page.get_by_text("No items are assigned to you yet")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("You passed the training round")).to_have_count(0)
    ctx.close()

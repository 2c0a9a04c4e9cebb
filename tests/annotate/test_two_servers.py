"""Two `h2h serve` processes on one PostgreSQL study behave as one (the setup in docs/app.md:
several app servers behind a proxy, one database). Driven in Debian's Chromium: cookies are
per host, not per port, so two servers on 127.0.0.1 see one browser's cookie just as two
servers behind one proxy address would.

* a rater signed in on server A continues on server B without signing in again;
* a session signed out on B is refused by A at its next save (nothing stored);
* a deactivation (`h2h raters deactivate`) is refused by both at once;
* failed sign-ins count across both servers.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect, sync_playwright

from data.engine import get_engine
from tests.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, served, session_cookie
from tests.conftest import _fresh_pg_url
from tests.helpers import item, jsonl, run_h2h

pytestmark = [pytest.mark.browser, pytest.mark.postgres]
WRONG = "H2H-QQQQ-{}222-3333-4444"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "app.md"


def h2h(*args: str) -> str:
    return run_h2h(*args).stdout


def _documented_setup() -> list[list[str]]:
    """The commands of the multi-server example in docs/app.md, as written there."""
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"Move a SQLite study there.*?```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].split() for line in block.splitlines()
            if line.startswith("h2h ")]


@pytest.fixture(scope="module")
def servers(pg_cluster, tmp_path_factory):
    """A SQLite study moved to PostgreSQL and served twice, by the commands in docs/app.md
    (the documented URL, file names and ports swapped for this test's)."""
    tmp = tmp_path_factory.mktemp("two")
    url = _fresh_pg_url(pg_cluster)  # `createdb pilot`
    pilot = tmp / "pilot.db"
    h2h("init", "--db", str(pilot), "--name", "Shared study")
    items = tmp / "items.jsonl"
    items.write_text(jsonl(*[item(f"it{i}", response=f"reply {i} " + uuid.uuid4().hex)
                             for i in range(6)]), encoding="utf-8")
    h2h("import", "items", str(items), "--db", str(pilot))
    codes = {name: h2h("raters", "add", name, "--db", str(pilot)).strip().splitlines()[-1]
             for name in ("pat", "kim")}
    h2h("assign", "--db", str(pilot), "--k", "2")
    swap = {"postgresql+psycopg://h2h@db.internal/pilot": url, "pilot.db": str(pilot),
            "pilot-move.db": str(tmp / "pilot-move.db")}
    serve_options = []
    for cmd in _documented_setup():
        args = [swap.get(a, a) for a in cmd[1:]]
        if args[0] == "serve":
            opts = args[args.index("--trusted-proxy"):]
            serve_options.append(opts)
        else:
            h2h(*args)
    assert len(serve_options) == 2 and serve_options[0] == ["--trusted-proxy", "127.0.0.1"]
    with served(url, tmp / "a.log", *serve_options[0]) as a, \
            served(url, tmp / "b.log", *serve_options[1]) as b, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield {"a": a, "b": b, "url": url, "codes": codes, "browser": browser,
               "engine": get_engine(url)}
        browser.close()


def _progress(page) -> str:
    loc = page.get_by_text(re.compile(r"\d+ of \d+ done"))
    loc.wait_for(timeout=60_000)
    return loc.inner_text()


def _sign_in(page, base: str, code: str) -> None:
    page.goto(base)
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()


def _settled(page) -> None:
    """Wait until the app has finished running and stayed idle for a second (a fresh page
    may run its script twice; a choice made during a run can be redrawn away)."""
    page.locator('[data-testid="h2h-ready"]').wait_for(state="attached", timeout=60_000)
    idle = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
    quiet = 0
    for _ in range(200):
        quiet = quiet + 1 if idle.count() else 0
        if quiet >= 4:
            return
        time.sleep(0.25)
    raise AssertionError("the app never became idle")


def _choose_all(page, score: str = "3") -> None:
    """Choose ``score`` on every dimension of the item on screen, once the form is drawn."""
    _settled(page)
    groups = page.locator('div[data-testid="stRadio"]')
    for i in range(groups.count()):
        option = groups.nth(i).locator('div[role="radiogroup"] label').filter(
            has_text=re.compile(rf"^{score} "))
        option.click()
        expect(option.locator("input")).to_be_checked(timeout=30_000)


def _ratings(engine, name: str) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT COUNT(*) FROM rating r JOIN rater x ON "
                                 "x.id = r.rater_id WHERE x.name = :n"), {"n": name}
                         ).scalar_one()


def test_a_session_continues_on_the_other_server_and_sign_out_ends_it_on_both(servers):
    ctx = servers["browser"].new_context(viewport={"width": 1400, "height": 1000})
    on_a = ctx.new_page()
    _sign_in(on_a, servers["a"], servers["codes"]["pat"])
    assert _progress(on_a).startswith("0 of ")
    session_cookie(ctx)
    on_b = ctx.new_page()
    on_b.goto(servers["b"])  # no code typed: the session from server A carries over
    assert _progress(on_b).startswith("0 of ")
    _choose_all(on_b)
    on_b.get_by_role("button", name="Save and next").click()
    on_b.get_by_text(re.compile(r"^1 of \d+ done")).wait_for(timeout=60_000)
    saved = _ratings(servers["engine"], "pat")
    assert saved > 0
    on_a.reload()
    assert _progress(on_a).startswith("1 of ")  # server A sees B's save and the session

    on_b.get_by_role("button", name="Sign out").click()  # signed out on B …
    on_b.get_by_label("Access code").wait_for(timeout=60_000)
    _choose_all(on_a, "4")  # … and A, with the page still open, refuses the next save
    on_a.get_by_role("button", name="Save and next").click()
    on_a.get_by_text("You were signed out").wait_for(timeout=60_000)
    on_a.get_by_label("Access code").wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    on_a.screenshot(path=str(ARTIFACTS / "30-two-servers-signed-out-elsewhere.png"))
    assert _ratings(servers["engine"], "pat") == saved
    ctx.close()


def test_a_deactivated_rater_is_refused_by_both_servers(servers):
    ctx = servers["browser"].new_context(viewport={"width": 1400, "height": 1000})
    on_a = ctx.new_page()
    _sign_in(on_a, servers["a"], servers["codes"]["kim"])
    _progress(on_a)
    session_cookie(ctx)
    on_b = ctx.new_page()
    on_b.goto(servers["b"])
    _progress(on_b)
    before = _ratings(servers["engine"], "kim")
    out = h2h("raters", "deactivate", "kim", "--db", servers["url"])
    assert "1 open session ended" in out
    for page in (on_a, on_b):
        _choose_all(page)
        page.get_by_role("button", name="Save and next").click()
        page.get_by_text("Your access to this study has been ended").wait_for(timeout=60_000)
    assert _ratings(servers["engine"], "kim") == before
    fresh = servers["browser"].new_page()
    _sign_in(fresh, servers["b"], servers["codes"]["kim"])
    fresh.get_by_text("That code did not work").wait_for(timeout=60_000)
    ctx.close()
    fresh.close()


def test_failed_sign_ins_count_across_both_servers(servers):
    ctx = servers["browser"].new_context()
    page = ctx.new_page()
    for i, server in enumerate(["a", "b", "a"]):  # three free failures, spread over both
        _sign_in(page, servers[server], WRONG.format(i + 2))
        page.get_by_text("That code did not work").wait_for(timeout=60_000)
    bucket = sa.text("SELECT failures, last_failure_at FROM signin_throttle "
                     "WHERE bucket = 'prefix:QQQQ'")
    with servers["engine"].connect() as c:
        n3, t3 = c.execute(bucket).one()
    assert n3 == 3
    _sign_in(page, servers["b"], WRONG.format(5))
    page.get_by_text("That code did not work").wait_for(timeout=60_000)
    with servers["engine"].connect() as c:
        n4, t4 = c.execute(bucket).one()
    # the 4th failure on this prefix, on the other server, waited its turn: it was checked
    # no sooner than 1 s after the 3rd (the servers' own clock, no wall-clock bound here)
    assert n4 == 4 and (t4 - t3).total_seconds() >= 0.95
    # someone else's correct code, on either server, does not wait for those failures
    other = servers["browser"].new_context().new_page()
    _sign_in(other, servers["a"], servers["codes"]["pat"])
    _progress(other)
    ctx.close()


def test_the_client_address_comes_from_a_trusted_proxy(servers):
    """Both servers run with --trusted-proxy 127.0.0.1, as documented; the browser, on
    127.0.0.1, stands in for the proxy and sends X-Forwarded-For: failures count against that
    client, not against the proxy's address that every user would share."""
    ctx = servers["browser"].new_context(
        extra_http_headers={"X-Forwarded-For": "6.6.6.6, 198.51.100.77"})
    page = ctx.new_page()
    _sign_in(page, servers["a"], "H2H-RRRR-2222-3333-4444")
    page.get_by_text("That code did not work").wait_for(timeout=60_000)
    with servers["engine"].connect() as c:
        buckets = dict(c.execute(sa.text("SELECT bucket, failures FROM signin_throttle "
                                         "WHERE bucket LIKE 'client:%'")).all())
    assert buckets.get("client:198.51.100.77") == 1  # the right-most untrusted entry
    assert "client:6.6.6.6" not in buckets  # what the client wrote itself is not believed
    ctx.close()

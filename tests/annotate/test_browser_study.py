"""`make demo` as a person sees it: the served app in Debian's Chromium lists the study."""

from __future__ import annotations

import subprocess
import sys

import pytest
from playwright.sync_api import sync_playwright

from tests.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, served

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_served_demo_lists_the_study(tmp_path, browser):
    db = tmp_path / "demo.db"
    subprocess.run([sys.executable, "-m", "annotate.cli", "demo", "--db", str(db)], check=True,
                   capture_output=True)
    outside: list[str] = []
    with served(db, tmp_path / "serve.log") as base:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", lambda r: outside.append(r.url)
                if not r.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:",
                                         "blob:")) else None)
        page.goto(base)
        page.get_by_role("heading", name="H2HTalk demo study").wait_for(timeout=30_000)
        page.get_by_text("simulated", exact=False).first.wait_for()
        page.get_by_text("Rubric dimensions").wait_for()
        page.get_by_role("cell", name="memory_fidelity").wait_for()
        body = page.inner_text("body")
        assert "Scenarios" in body and "43" in body
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "study.png"), full_page=True)
        page.close()
    assert outside == []  # the app fetches nothing from outside this machine

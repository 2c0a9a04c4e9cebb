"""The file uploader in Chinese, in Debian's Chromium against the real `h2h serve`: Streamlit
draws the uploader's own texts ("Upload", "200MB per file • CSV", "Drag and drop a file
here") in English whatever the page's language, and has no option to change them; the app
puts its own Chinese texts in their place (CSS generated text, the English hidden), so a
Chinese admin reads Chinese there too. English admins keep Streamlit's texts. Screenshots go
to test-artifacts/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from data.engine import get_engine
from data.raters import add_rater, set_language
from tests.browser import ARTIFACTS, CHROMIUM_ARGS, CHROMIUM_FULL, served, settled

pytestmark = pytest.mark.browser
ZONE = '[data-testid="stFileUploaderDropzone"]'


@pytest.fixture(scope="module")
def app(tmp_path_factory, demo_template):
    tmp = tmp_path_factory.mktemp("uploader")
    db = demo_template.copy_to(tmp)
    engine = get_engine(db)
    codes = {}
    for name, lang in (("ada-zh", "zh"), ("ada-en", "en")):
        admin, codes[lang] = add_rater(engine, name, "admin")
        set_language(engine, admin.id, lang)
    with served(db, tmp / "serve.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM_FULL, args=CHROMIUM_ARGS)
        yield {"base": base, "browser": browser, "codes": codes}
        browser.close()
    engine.dispose()


def _import_page(app, lang: str):
    page = app["browser"].new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{app['base']}/?code={app['codes'][lang]}")
    page.get_by_role("link", name=re.compile("^(导入|Import)$")).click()
    page.locator(ZONE).wait_for(timeout=60_000)
    settled(page)
    return page


def _shown(locator) -> str:
    """What a person reads in an element: its visible text, generated text included."""
    return locator.evaluate("""e => {
        const out = [];
        const walk = n => {
            if (n.nodeType === Node.TEXT_NODE) {  // text shrunk to nothing is not seen
                if (getComputedStyle(n.parentElement).fontSize !== '0px')
                    out.push(n.textContent);
                return;
            }
            if (n.nodeType !== Node.ELEMENT_NODE) return;
            const s = getComputedStyle(n);
            if (s.display === 'none' || s.visibility === 'hidden') return;
            if (n.dataset.testid === 'stIconMaterial') return;  // an icon's ligature name
            const gen = p => { const c = getComputedStyle(n, p).content;
                               return c && c !== 'none' && c !== 'normal'
                                   ? JSON.parse(c) : ''; };
            out.push(gen('::before'));
            n.childNodes.forEach(walk);
            out.push(gen('::after'));
        };
        walk(e);
        return out.join(' ').replace(/\\s+/g, ' ').trim();
    }""")


def test_the_uploader_speaks_the_admins_language(app):
    page = _import_page(app, "zh")
    zone = page.locator(ZONE)
    text = _shown(zone)
    assert "选择文件" in text and "每个文件不超过 200MB · JSONL、JSON、CSV" in text, text
    assert not re.search(r"Upload|per file", text), text
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "uploader-zh.png"))
    # the button is named by its Chinese text alone (the English left the accessibility tree)
    expect(page.get_by_role("button", name="选择文件", exact=True)).to_be_visible()
    # dragging a file over the box
    data = page.evaluate_handle("() => { const d = new DataTransfer(); d.items.add(new File("
                                "['x'], 'a.csv', {type: 'text/csv'})); return d; }")
    page.locator(ZONE).dispatch_event("dragenter", {"dataTransfer": data})
    expect(page.locator(ZONE)).to_contain_text("Drag and drop")  # Streamlit's own, hidden
    text = _shown(page.locator(ZONE))
    assert "将文件拖放到此处" in text and "Drag and drop" not in text, text
    page.close()


def test_english_admins_keep_streamlits_texts(app):
    page = _import_page(app, "en")
    text = _shown(page.locator(ZONE))
    assert "Upload" in text and "200MB per file • JSONL, JSON, CSV" in text, text
    assert "选择文件" not in text
    page.close()

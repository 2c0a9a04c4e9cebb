"""Rubric Markdown is read by a real parser and drawn without images, raw HTML or unsafe
links; every name that goes into a Plotly figure is escaped. Fast checks (no browser) of
what tests/annotate/test_hostile_text_pages.py then loads in Chromium."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.services.render import levels_table_html, rubric_text_html
from data.engine import write_session
from data.errors import FormatError
from data.models import Assignment, Rater, Rating, utcnow
from data.rubric import load_default_rubric, parse_rubric, rubric_from_definition
from data.rubric_markdown import images_in, rubric_html
from data.study import current_rubric, set_rubric
from tests.annotate.conftest import APP_DIR
from tests.annotate.hostile_corpus import MARK, corpus, one_line

P = "http://127.0.0.1:9"
PAYLOADS = corpus(P, "t")
REPORTED = ["nested-brackets", "escaped-bracket", "reference-image"]  # issue 36's three
IMAGES = REPORTED + ["collapsed-reference-image", "reference-image-angle-title",
                     "image-inside-link", "image-entity-url", "img-in-table-cell"]

# what the renderer may write: formatting only (markdown-it's CommonMark + GFM tables)
TAGS = {"p", "em", "strong", "s", "ul", "ol", "li", "a", "code", "pre", "blockquote", "hr",
        "br", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
        "div"}
ATTRS = {"href", "target", "rel", "class", "style", "start", "lang"}


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def _tags(markup: str):
    p = _Tags()
    p.feed(markup)
    return p.found


def test_the_corpus_is_large_enough():
    assert len(PAYLOADS) >= 23


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_every_payload_renders_to_formatting_only(name):
    out = rubric_text_html(PAYLOADS[name])
    for tag, attrs in _tags(out):
        assert tag in TAGS, (name, tag, out)
        for attr, value in attrs:
            assert attr in ATTRS, (name, tag, attr)
            value = value or ""
            if attr == "href":  # a kept link goes to the web, never to the sniffer or a script
                assert value.startswith("https://example.org/"), (name, value)
            elif attr == "style":
                assert value in ("text-align:left", "text-align:right",
                                 "text-align:center"), (name, value)
            else:
                assert P not in value and MARK not in value, (name, attr, value)
    assert "<img" not in out and "<svg" not in out and "<script" not in out


def test_images_and_html_show_as_the_characters_written():
    out = rubric_html(PAYLOADS["nested-brackets"])
    assert out == '<p>![a[b]c](//127.0.0.1:9/h2hpwn-t-nested.png)</p>\n'
    out = rubric_html(PAYLOADS["css-url-span"])
    assert "&lt;span style=&quot;background-image:url(" in out
    out = rubric_html("**Warm** and *kind*; see [the manual](https://example.org/m)")
    assert out == ('<p><strong>Warm</strong> and <em>kind</em>; see <a href="https://example.'
                   'org/m" target="_blank" rel="noopener noreferrer nofollow">the manual</a>'
                   "</p>\n")


@pytest.mark.parametrize("name", IMAGES)
def test_the_parser_finds_every_form_of_image(name):
    assert images_in(PAYLOADS[name]), name


@pytest.mark.parametrize("name", REPORTED + ["collapsed-reference-image", "image-entity-url"])
def test_a_rubric_with_an_image_in_any_form_is_refused_at_import(name):
    """`h2h init --rubric x.toml` accepted the three reported forms; now the file is refused,
    naming the field and its line."""
    text = (Path(__file__).resolve().parents[2] / "data" / "rubrics" / "companion.toml"
            ).read_text("utf-8")
    start = text.index('guidelines.en = """')
    end = text.index('"""', start + len('guidelines.en = """'))
    quote = "'" * 3  # a TOML literal string: the payload's backslashes stay as written
    text = (text[:start] + f"guidelines.en = {quote}\nRead the whole conversation.\n"
            + PAYLOADS[name] + f"\n{quote}" + text[end + 3:])
    with pytest.raises(FormatError) as ei:
        parse_rubric(text, file="evil.toml")
    (problem,) = ei.value.problems
    assert problem.field == "guidelines.en" and problem.line == 16
    assert "images are not allowed" in str(problem)


def test_an_untranslated_anchor_keeps_its_language_and_tag():
    rub = load_default_rubric().in_language("zh")
    html = levels_table_html(rub.dimensions[0], ("分数", "表现"), rub.language)
    assert html.count("<tr>") == 1 + len(rub.dimensions[0].levels)


def test_every_page_draws_figures_through_the_escaping_helper():
    """Plotly reads HTML in labels; a page or component calling st.plotly_chart itself would
    skip the escaping (annotate.components.charts.plotly_chart)."""
    direct = [str(p.relative_to(APP_DIR)) for p in APP_DIR.rglob("*.py")
              if "st.plotly_chart(" in p.read_text("utf-8") and p.name != "charts.py"]
    assert direct == []


def test_progress_figures_show_rater_names_and_labels_literally(demo_db):
    eng = demo_db["engine"]
    label = one_line(P, "label")
    d = current_rubric(eng).definition()
    d["dimensions"][0]["label"] = label
    set_rubric(eng, rubric_from_definition(d))
    name = one_line(P, "rater")
    with write_session(eng) as s:  # a name an older study could hold
        r = Rater(name=name, role="rater")
        s.add(r)
        s.flush()
        s.add(Rating(rater_id=r.id, item_id="dlg-001-aster", dimension="empathy", score=3,
                     rubric_version=current_rubric(eng).version, created_at=utcnow(),
                     updated_at=utcnow()))
        s.add(Assignment(rater_id=r.id, item_id="dlg-001-aster", position=0,
                         completed_at=utcnow(), created_at=utcnow()))  # in the per-day chart
    from annotate.resources import forget_rubric
    forget_rubric()
    try:
        at = AppTest.from_file(str(APP_DIR / "views" / "admin_progress.py"), default_timeout=60)
        at.session_state[state.IDENTITY] = demo_db["admin"]
        at.run()
    finally:
        forget_rubric()
    assert not at.exception
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    assert len(specs) >= 2  # items done per day per rater, ratings per dimension, …
    shown = json.dumps(specs)
    assert "<span" not in shown and "background-image" in shown  # there, escaped
    # a rater is a trace of the per-day chart (its legend name), a dimension a category
    texts = [x for spec in specs for tr in spec["data"]
             for x in [*tr.get("x", []), *tr.get("y", []), tr.get("name")]]
    assert name.replace("<", "&lt;").replace(">", "&gt;") in texts
    assert label.replace("<", "&lt;").replace(">", "&gt;") in texts


def test_a_reference_without_its_definition_is_text_not_an_image():
    """CommonMark: ``![x][logo]`` with no ``[logo]: url`` is the characters written; nothing
    to fetch, so nothing to refuse (the import refuses it once the definition is there)."""
    assert images_in("![x][logo]") == []
    assert rubric_html("![x][logo]") == "<p>![x][logo]</p>\n"
    assert images_in("![x][logo]\n\n[logo]: //x/y.png") == ["//x/y.png"]

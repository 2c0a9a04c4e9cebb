"""Every action an admin can take on the admin pages, clicked through AppTest, with the change
it makes in the database asserted: add a rater, deactivate one, assign, import (items, ratings,
a rubric; success and failure), save an adjudication (and make it gold), the export downloads,
and calibration's "Save and run"."""

from __future__ import annotations

import html
import io
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import sqlalchemy as sa
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.services import calibration as cal
from annotate.services.render import md_text
from data.exports import export_matrix_csv, export_ratings_csv, export_wide_csv
from data.importing import export_items
from data.raters import add_rater, authenticate
from data.sessions import SessionEnded, end_session, open_session, resume
from tests.annotate.conftest import APP_DIR
from tests.helpers import item, jsonl, snapshot
from tests.judge.fakes import FakeServer


def _page(name: str, who) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / name), default_timeout=120)
    at.session_state[state.IDENTITY] = who
    return at.run()


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def _shown(element) -> str:
    """The text a message element shows: the pages escape every punctuation mark as an HTML
    entity (annotate/services/render.py md_text) so that nothing in it is read as Markdown."""
    return html.unescape(element.value).replace("  \n", "\n")


def _scalar(engine, sql: str, **params):
    with engine.connect() as c:
        return c.execute(sa.text(sql), params).scalar_one()


def test_add_a_rater_then_deactivate_them(demo_db):
    eng = demo_db["engine"]
    at = _page("admin_raters.py", demo_db["admin"])
    at.text_input[0].input("Dr Quinn")
    at.selectbox[0].select("admin")
    _button(at, "Create and show code").click().run()
    assert not at.exception
    code = at.code[0].value
    row = _scalar(eng, "SELECT role || '|' || CAST(active AS VARCHAR(5)) || '|' || code_hash "
                       "FROM rater WHERE name = 'Dr Quinn'")
    role, active, code_hash = row.split("|")
    assert role == "admin" and active.lower() in ("1", "true")
    assert code not in code_hash  # only the hash is stored
    assert authenticate(eng, code).name == "Dr Quinn"
    assert "Dr Quinn" in _shown(at.success[0])

    # the same name again: an error, no second row
    at.text_input[0].input("Dr Quinn")
    _button(at, "Create and show code").click().run()
    assert "already exists" in _shown(at.error[0])
    assert _scalar(eng, "SELECT COUNT(*) FROM rater WHERE name = 'Dr Quinn'") == 1

    # two browsers signed in as Dr Quinn, one already signed out: deactivation ends the other
    quinn = _scalar(eng, "SELECT id FROM rater WHERE name = 'Dr Quinn'")
    tokens = [open_session(eng, quinn)[0] for _ in range(2)]
    end_session(eng, tokens[0])
    at.selectbox[1].select("Dr Quinn")
    _button(at, "Deactivate").click().run()
    assert not at.exception
    assert _shown(at.success[0]) == "Deactivated Dr Quinn; 1 open session ended."
    assert authenticate(eng, code) is None
    assert not _scalar(eng, "SELECT active FROM rater WHERE name = 'Dr Quinn'")
    with eng.connect() as c:
        ended = c.execute(sa.text("SELECT revoked_reason FROM auth_session WHERE rater_id = :r "
                                  "ORDER BY id"), {"r": quinn}).scalars().all()
    assert ended == ["signed_out", "deactivated"]
    with pytest.raises(SessionEnded) as gone:
        resume(eng, tokens[1])
    assert gone.value.reason == "deactivated"
    assert "Dr Quinn" not in at.selectbox[1].options  # no longer offered


def test_assign_deals_every_item_to_a_new_rater(demo_db):
    eng = demo_db["engine"]
    add_rater(eng, "quinn", "rater")
    pat_before = _scalar(eng, "SELECT COUNT(*) FROM assignment a JOIN rater r ON r.id = "
                              "a.rater_id WHERE r.name = 'pat'")
    n_items = _scalar(eng, "SELECT COUNT(*) FROM item")
    at = _page("admin_assign.py", demo_db["admin"])
    at.number_input[0].set_value(2)      # k: every item to both raters
    at.number_input[2].set_value(0.0)    # no hidden repeats for the new rater
    at.number_input[4].set_value(0.0)    # no attention checks
    _button(at, "Assign").click().run()
    assert not at.exception and at.success, [e.value for e in at.error]
    quinn = _scalar(eng, "SELECT COUNT(*) FROM assignment a JOIN rater r ON r.id = a.rater_id "
                         "WHERE r.name = 'quinn' AND a.kind = 'primary'")
    assert quinn == n_items
    # pat keeps every assignment they had (nothing rated is moved, nothing removed)
    assert _scalar(eng, "SELECT COUNT(*) FROM assignment a JOIN rater r ON r.id = a.rater_id "
                        "WHERE r.name = 'pat'") == pat_before
    queues = at.dataframe[0].value.set_index("rater")
    assert queues.loc["quinn", "assigned"] == n_items and queues.loc["quinn", "done"] == 0


def _import(at: AppTest, kind: str, name: str, data: bytes, mime: str) -> AppTest:
    at.radio(key="h2h_import_kind").set_value(kind).run()
    at.file_uploader[0].set_value((name, data, mime)).run()
    at.button(key="h2h_do_import").click().run()
    assert not at.exception
    return at


def test_import_items_and_ratings_then_a_bad_file_changes_nothing(demo_db):
    eng = demo_db["engine"]
    n_items = _scalar(eng, "SELECT COUNT(*) FROM item")
    at = _page("admin_import.py", demo_db["admin"])
    data = jsonl(item("new-1"), item("new-2", task="itinerary")).encode()
    _import(at, "Items", "new.jsonl", data, "application/jsonl")
    assert _shown(at.success[0]).startswith("Items from new.jsonl: 2 added")
    assert _scalar(eng, "SELECT COUNT(*) FROM item") == n_items + 2
    assert _scalar(eng, "SELECT task FROM item WHERE id = 'new-2'") == "itinerary"

    csv = "item_id,rater,dimension,score\nnew-1,pat,empathy,4\nnew-1,pat,safety,\n"
    _import(at, "Ratings", "r.csv", csv.encode(), "text/csv")
    assert _shown(at.success[0]).startswith("Ratings from r.csv: 2 added")
    with eng.connect() as c:
        rows = c.execute(sa.text("SELECT r.dimension, r.score FROM rating r JOIN rater x ON "
                                 "x.id = r.rater_id WHERE x.name = 'pat' AND r.item_id = 'new-1'"
                                 " ORDER BY r.dimension")).all()
    assert [tuple(r) for r in rows] == [("empathy", 4.0), ("safety", None)]

    before = snapshot(eng)
    bad = jsonl(item("ok-3")) + '{"id": "bad-4", "task": "poetry", "context": {}}\n'
    _import(at, "Items", "bad.jsonl", bad.encode(), "application/jsonl")
    assert "bad.jsonl was rejected; nothing was imported." in _shown(at.error[0])
    assert "bad.jsonl:2: field 'response': required field is missing" in at.code[0].value
    assert snapshot(eng) == before


def test_import_a_rubric_version(demo_db):
    from importlib import resources

    eng = demo_db["engine"]
    old = _scalar(eng, "SELECT r.version FROM study s JOIN rubric r ON r.id = s.rubric_id")
    text = (resources.files("data") / "rubrics" / "companion.toml").read_text("utf-8")
    at = _page("admin_import.py", demo_db["admin"])
    new = text.replace("## How to rate", "## How to rate (v2)").encode()
    _import(at, "Rubric", "v2.toml", new, "application/toml")
    assert "is now current" in _shown(at.success[0])
    now = _scalar(eng, "SELECT r.version FROM study s JOIN rubric r ON r.id = s.rubric_id")
    assert now != old and now in _shown(at.success[0])
    assert _scalar(eng, "SELECT COUNT(*) FROM rubric") == 2
    _import(at, "Rubric", "v2.toml", new, "application/toml")
    assert "already current; nothing changed" in _shown(at.success[0])
    assert _scalar(eng, "SELECT COUNT(*) FROM rubric") == 2


def test_save_an_adjudication_and_make_it_gold(demo_db):
    eng = demo_db["engine"]
    with eng.connect() as c:
        ratings_before = c.execute(sa.text("SELECT * FROM rating ORDER BY id")).all()
    at = _page("admin_adjudicate.py", demo_db["admin"])
    # "item · dimension label · spread s" (the rubric's label, not its key)
    item_id, label = at.selectbox[0].options[0].split(" · ")[:2]
    from data.study import current_rubric

    dim = {d.label: d.key for d in current_rubric(eng).dimensions}[label]
    # the context the raters saw, in the rating page's layout (issue 34: turns only)
    ctx = json.loads(_scalar(eng, "SELECT context FROM item WHERE id = :i", i=item_id))
    shown = html.unescape("\n".join(e.proto.body for e in at.get("html")))
    for text in [ctx.get("persona"), ctx.get("schedule"), *ctx.get("memories", [])]:
        if text:
            assert text in shown, text
    assert "Companion's reply to rate" in shown and 'data-testid="h2h-response"' in shown
    # the raters' scores by name (no 0/1/2 index column), as the form shows them
    table = at.table[0].value
    assert table.index.name == "Rater" and list(table.columns) == ["Score"]
    assert all(" · " in v or v == "cannot rate" for v in table["Score"])
    # the scale with its level names and every anchor, as on the rating page
    level = current_rubric(eng).dimension(dim).levels[0]
    assert at.radio[0].options[0] == f"**{level.value}** {md_text(level.label)}"
    captions = list(at.radio[0].proto.captions)
    # the caption is Markdown with the anchor shown literally (punctuation as entities)
    assert len(captions) == 5 and html.unescape(captions[0]).startswith(level.anchor[:30])
    at.radio[0].set_value(1)
    at.text_area[0].input("  Both readings are defensible; the reply misses the risk.  ")
    at.checkbox(key="h2h_adj_gold").check()
    _button(at, "Save adjudication").click().run()
    assert not at.exception
    assert "Saved." in _shown(at.success[0]) and "gold score" in _shown(at.success[0])
    with eng.connect() as c:
        adj = c.execute(sa.text("SELECT a.score, a.note, r.name FROM adjudication a JOIN rater r "
                                "ON r.id = a.admin_id WHERE a.item_id = :i AND a.dimension = :d"),
                        {"i": item_id, "d": dim}).all()
        gold = c.execute(sa.text("SELECT score, rationale FROM gold_score WHERE item_id = :i "
                                 "AND dimension = :d"), {"i": item_id, "d": dim}).all()
        ratings_after = c.execute(sa.text("SELECT * FROM rating ORDER BY id")).all()
    note = "Both readings are defensible; the reply misses the risk."
    assert [tuple(a) for a in adj] == [(1.0, note, "ada")]
    assert [(float(g[0]), g[1]) for g in gold] == [(1.0, note)]
    assert ratings_after == ratings_before  # the raters' own scores are untouched
    # saved again with another score: the one adjudication is replaced, not duplicated
    at = _page("admin_adjudicate.py", demo_db["admin"])
    at.radio[0].set_value(2)
    _button(at, "Save adjudication").click().run()
    assert _scalar(eng, "SELECT COUNT(*) FROM adjudication") == 1
    assert _scalar(eng, "SELECT score FROM adjudication") == 2.0


def demo_db_first_dimension(eng):
    """The dimension the Export page's matrix download starts on: the rubric's first."""
    from data.study import current_rubric

    return current_rubric(eng).dimensions[0]


def test_export_downloads_hold_the_database(demo_db, monkeypatch):
    eng = demo_db["engine"]
    got: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def keep(self, path_or_data, mimetype, kind, filename=None):
        data = path_or_data.encode() if isinstance(path_or_data, str) else path_or_data
        got[filename] = data
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", keep)
    at = _page("admin_export.py", demo_db["admin"])
    assert not at.exception
    # the snapshot is made only when clicked (AppTest cannot click a download): its file is
    # checked in tests/annotate/test_browser_app.py::test_admin_downloads_a_consistent_backup
    first = demo_db_first_dimension(eng)
    assert [b.label for b in at.get("download_button")] == [
        "Ratings (long CSV)", "Ratings (wide CSV)", md_text(f"{first.label}: items × raters (CSV)"),
        "Items (JSON Lines)", "Study snapshot (SQLite file)"]
    assert got["ratings.csv"].decode() == export_ratings_csv(eng)
    assert got["ratings_wide.csv"].decode() == export_wide_csv(eng)
    assert got[f"{first.key}_matrix.csv"].decode() == export_matrix_csv(eng, first.key)
    assert got["items.jsonl"].decode() == export_items(eng)
    df = pd.read_csv(io.BytesIO(got["ratings.csv"]))
    assert len(df) == _scalar(eng, "SELECT COUNT(*) FROM rating")
    assert {"item_id", "rater", "dimension", "score"} <= set(df.columns)
    items = [json.loads(line) for line in got["items.jsonl"].decode().splitlines()]
    assert len(items) == _scalar(eng, "SELECT COUNT(*) FROM item")


def test_calibration_save_and_run_judges_the_calibration_set(demo_db, monkeypatch, tmp_path):
    eng = demo_db["engine"]
    fake = FakeServer("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "annotate.cli", "judge", "run", "--db", str(demo_db["db"]),
             "--provider", "anthropic", "--model", "fake-a", "--name", "fake-a", "--items",
             "dlg-001-aster", "--base-url", fake.url, "--quiet"],
            capture_output=True, text=True, timeout=300, env=dict(os.environ))
        assert proc.returncode == 0, proc.stderr
        at = _page("admin_calibrate.py", demo_db["admin"])
        assert not at.exception
        # a simulated configuration cannot be run: an error, nothing judged
        at.selectbox(key="h2h_new_base").select("sim-judge-plain").run()
        _button(at, "Save and run on the calibration set").click().run()
        assert "cannot be run" in _shown(at.error[0])
        assert cal.judgments_stored(eng, "sim-judge-plain-v2") == 0

        at.number_input(key="h2h_cal_sample").set_value(3).run()
        at.selectbox(key="h2h_new_base").select("fake-a").run()
        form = {t.label: t for t in at.text_input}
        form["Name of the new version"].input("fake-a-strict")
        form["Provider server URL (optional)"].input(fake.url)
        system = next(t for t in at.text_area if t.label == "System text")
        system.input(system.value + "\nBe strict about safety.")
        _button(at, "Save and run on the calibration set").click().run()
        assert not at.exception and "judging 3 items in the background" in _shown(at.success[0])
        name, pid, n, path = at.session_state[state.PROMPT_RUN]
        assert (name, n) == ("fake-a-strict", 3)
        _, status = os.waitpid(pid, 0)  # the page's background run, to its end
        assert os.waitstatus_to_exitcode(status) == 0
        items = cal.calibration_items(eng, 3, 0)
        n_dims = {"dialogue": 3, "recollection": 4, "itinerary": 4}
        expected = sum(n_dims[cal.item_of(eng, i).task] for i in items)
        assert cal.judgments_stored(eng, "fake-a-strict") == expected
        row, tmpl = cal.template_of(eng, "fake-a-strict")
        assert "Be strict about safety." in tmpl["system"] and row.model == "fake-a"
        assert "Be strict about safety." in open(path, encoding="utf-8").read()
        # one request per (item, dimension), each with the edited system text
        assert sum("Be strict about safety." in c.system for c in fake.calls("judge")) == \
            expected
        at.button(key="h2h_new_refresh").click().run()
        assert any(f"fake-a-strict: {expected} judgments stored" in html.unescape(p.proto.text)
                   for p in at.get("progress"))  # the name is escaped (inert Markdown)
    finally:
        fake.close()


@pytest.mark.parametrize("page", ["admin_raters.py", "admin_assign.py", "admin_import.py",
                                  "admin_adjudicate.py", "admin_export.py"])
def test_a_rater_cannot_act_on_admin_pages(demo_db, page):
    at = _page(page, demo_db["rater"])
    assert at.error[0].value == "This page is not available to you."
    assert not at.get("download_button") and not at.button


def test_import_page_refuses_an_unknown_rater_unless_asked_to_add_them(demo_db):
    eng = demo_db["engine"]
    at = _page("admin_import.py", demo_db["admin"])
    csv = b"item_id,rater,dimension,score\ndlg-001-aster,pta,empathy,4\n"
    _import(at, "Ratings", "typo.csv", csv, "text/csv")
    assert "typo.csv:2: field 'rater': unknown rater 'pta'" in at.code[0].value
    assert _scalar(eng, "SELECT COUNT(*) FROM rater WHERE name = 'pta'") == 0
    at.checkbox(key="h2h_add_raters").check()
    _import(at, "Ratings", "typo.csv", csv, "text/csv")
    assert _shown(at.success[0]).endswith("; 1 rater added (pta)")
    assert _scalar(eng, "SELECT COUNT(*) FROM rater WHERE name = 'pta'") == 1

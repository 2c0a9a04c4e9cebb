"""Every page through Streamlit's AppTest: sign-in, rating, guidelines, each admin page, and
the role guard."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.services.auth import GENERIC_FAILURE, sign_out
from tests.annotate.conftest import APP_DIR

ADMIN_PAGES = ["study.py", "admin_import.py", "admin_raters.py", "admin_assign.py",
               "admin_progress.py", "admin_agreement.py", "admin_adjudicate.py",
               "admin_export.py", "admin_report.py", "admin_calibrate.py", "admin_quality.py",
               "admin_norming.py", "admin_ranking.py"]
MODEL_WORDS = ("aster-70b", "birch-8b", "cedar-1b", "baseline")


def _page(name: str, who=None) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / name), default_timeout=60)
    if who is not None:
        at.session_state[state.IDENTITY] = who
    return at.run()


def _texts(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "text", "info",
                 "warning", "error", "success"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    parts += [str(e.proto) for e in at.get("html")]
    parts += [str(r.options) for r in at.radio]
    return "\n".join(parts)


def test_sign_in_wrong_then_right(demo_db):
    at = AppTest.from_file(str(APP_DIR / "app.py"), default_timeout=60).run()
    at.text_input(key="h2h_code_input").input("H2H-WRONG-CODE-0000-0000")
    at.button[0].click().run()
    assert at.error[0].value == GENERIC_FAILURE
    assert state.IDENTITY not in at.session_state
    at.text_input(key="h2h_code_input").input(demo_db["rater_code"].lower())
    at.button[0].click().run()
    assert at.session_state[state.IDENTITY].name == "pat"
    assert not at.exception
    # the run the button started drew the first item itself (no second run asked for): the
    # sign-in page is gone and the rating form is there
    assert at.get("progress") and "0 of 162 done" in at.get("progress")[0].proto.text
    assert not at.text_input and "h2h_code_input" not in at.session_state


def test_rate_page_is_blind_and_saves(demo_db):
    at = _page("rate.py", demo_db["rater"])
    assert not at.exception
    assert "0 of 162 done" in at.get("progress")[0].proto.text
    text = _texts(at)
    assert all(w not in text for w in MODEL_WORDS), "model or condition leaked to a rater"
    at.button(key="h2h_save").click().run()
    missing = "\n".join(e.proto.body for e in at.get("html") if "h2h-missing" in e.proto.body)
    assert "Score every dimension" in missing and "Empathy" in missing
    radios = list(at.radio)
    for r in radios:
        r.set_value(4)
    at.button(key="h2h_save").click().run()
    assert "1 of 162 done" in at.get("progress")[0].proto.text
    with demo_db["engine"].connect() as c:
        n = c.execute(sa.text("SELECT COUNT(*) FROM rating r JOIN rater x ON x.id = r.rater_id "
                              "WHERE x.name = 'pat' AND r.score = 4")).scalar_one()
    assert n == len(radios)


def test_rate_page_refuses_someone_elses_item(demo_db):
    with demo_db["engine"].connect() as c:
        other = c.execute(sa.text("SELECT id FROM item WHERE id NOT IN (SELECT item_id FROM "
                                  "assignment)")).first()
        c.execute(sa.text("DELETE FROM assignment WHERE item_id = 'dlg-001-aster'"))
        c.commit()
    item_id = other[0] if other else "dlg-001-aster"
    at = AppTest.from_file(str(APP_DIR / "views" / "rate.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = demo_db["rater"]
    at.query_params["item"] = item_id
    at.run()
    assert at.error[0].value == "That item is not in your queue."


def test_guidelines_show_every_anchor(demo_db):
    at = _page("guidelines.py", demo_db["rater"])
    assert not at.exception
    tables = [e.proto.body for e in at.get("html") if "h2h-levels" in e.proto.body]
    assert len(tables) == 5
    assert "Harmful" in tables[1]


def test_every_admin_page_renders_for_an_admin(demo_db):
    for name in ADMIN_PAGES:
        at = _page(name, demo_db["admin"])
        assert not at.exception, (name, at.exception)
        assert not any("not available" in e.value for e in at.error), name


def test_admin_pages_refuse_a_rater(demo_db):
    for name in ADMIN_PAGES:
        at = _page(name, demo_db["rater"])
        assert at.error[0].value == "This page is not available to you.", name
        assert len(at.main.children) <= 2, name  # stopped before drawing anything else


def test_rater_navigation_has_no_admin_pages(demo_db):
    at = AppTest.from_file(str(APP_DIR / "app.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = demo_db["rater"]
    at.run()
    assert not at.exception
    assert "0 of 162 done" in at.get("progress")[0].proto.text
    # the admin pages are not even registered for a rater
    with pytest.raises(ValueError, match=r"Known pages: \[[^\]]*rate\.py[^\]]*guidelines\.py'\]"):
        at.switch_page("views/admin_raters.py")


def test_report_page_builds_a_download(demo_db):
    import io
    import zipfile

    at = _page("admin_report.py", demo_db["admin"])
    at.toggle[0].set_value(False)  # figures are exported in the report tests; keep this fast
    at.button(key="h2h_build_report").click().run()
    assert not at.exception
    data = at.session_state[state.REPORT_ZIP]
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert {"report/report.html", "report/tables.tex", "report/manifest.json"} <= set(names)


def test_calibration_page_shows_the_ceiling_with_cis_and_the_verdicts(demo_db):
    at = _page("admin_calibrate.py", demo_db["admin"])
    assert not at.exception
    text = _texts(at)
    assert "against the same leave-one-out consensus" in text
    verdicts = [m.value for m in at.markdown if "best configuration" in m.value]
    assert len(verdicts) == 5
    assert all(any(o in v for o in ("can replace a human rater", "cannot replace a human rater",
                                    "not enough evidence yet", "no verdict")) for v in verdicts)
    df = at.dataframe[0].value
    assert {"ceiling QWK", "ceiling low", "ceiling high", "judge − ceiling", "diff low",
            "diff high", "verdict", "items"} <= set(df.columns)
    assert (df["ceiling low"] < df["ceiling QWK"]).all()
    assert (df["ceiling QWK"] < df["ceiling high"]).all()


def test_agreement_page_weights_pairs_and_shows_the_ceiling(demo_db):
    """Charts lead each section (issue 34); the notes are in words, each said once: no
    internal key ("cohen_kappa:", "icc:"), one line for the five dimensions' "cannot rate"
    answers, not five."""
    import html

    at = _page("admin_agreement.py", demo_db["admin"])
    assert not at.exception
    table = at.table[0].value
    assert len(table) == 5
    heads = [html.unescape(c) for c in table.columns]
    assert "Human ceiling QWK (95% CI)" in heads and "Cohen's κ (quadratic)" in heads
    assert len(at.get("plotly_chart")) >= 3  # humans, judges, rater severity
    text = html.unescape(_texts(at))
    assert "weighted by the items each pair shares" in text
    assert "cohen_kappa:" not in text and "icc:" not in text and "alt-test:" not in text
    assert text.count("answers are left out of every statistic") == 1
    assert "Replies (items) flagged for misfit" in text and "Raters flagged for misfit" in text


def test_a_save_after_the_session_ended_says_why_and_keeps_the_choices(demo_db):
    """Signed out in another window (or idle, or deactivated) while choosing scores: "Save
    and next" stores nothing, the tab goes to the sign-in page with the reason, and after
    signing in again the item comes back with the choices made."""
    eng = demo_db["engine"]
    at = AppTest.from_file(str(APP_DIR / "app.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = demo_db["rater"]
    at.run()
    for r in at.radio:
        r.set_value(2)
    at.text_area(key=state.RATE_COMMENT).input("second thoughts")
    sign_out(eng, demo_db["rater"])  # e.g. "Sign out" pressed in another window
    at.button(key="h2h_save").click().run()
    assert not at.exception
    assert state.IDENTITY not in at.session_state
    assert "You were signed out" in at.warning[0].value and "kept" in at.warning[0].value
    with eng.connect() as c:
        assert c.execute(sa.text("SELECT COUNT(*) FROM rating r JOIN rater x ON "
                                 "x.id = r.rater_id WHERE x.name = 'pat'")).scalar_one() == 0
    at.text_input(key="h2h_code_input").input(demo_db["rater_code"])
    at.button[0].click().run()
    assert at.session_state[state.IDENTITY].name == "pat"
    assert [r.value for r in at.radio] == [2] * len(at.radio)
    assert at.text_area(key=state.RATE_COMMENT).value == "second thoughts"
    assert any("choices on this item were kept" in w.value for w in at.warning)
    at.button(key="h2h_save").click().run()
    assert "1 of 162 done" in at.get("progress")[0].proto.text

"""The study page, driven headlessly by Streamlit's AppTest."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.services.auth import Identity
from data.engine import get_engine
from data.sample import build_sample_study
from data.study import current_rubric, init_study

APP = str(Path(__file__).resolve().parents[2] / "annotate" / "views" / "study.py")
ADMIN = Identity(1, "ada", "admin")


def test_study_page_lists_the_study(tmp_path, monkeypatch):
    db = tmp_path / "demo.db"
    monkeypatch.setenv("H2H_DB", str(db))
    engine = get_engine(db)
    init_study(engine, name="Pilot 七", description="Companion replies, rated blind.")
    build_sample_study(engine, current_rubric(engine))
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state[state.IDENTITY] = ADMIN
    at.run()
    assert not at.exception
    assert at.title[0].value == "Pilot 七"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Scenarios"] == "43"
    assert metrics["Dialogue items"] == "48"
    assert "simulated" in at.info[0].value
    dims = at.table[0].value
    # keys shown as code, as files write them (the labels are in the admin's language)
    assert list(dims["Key"]) == ["`empathy`", "`safety`", "`fluency`", "`memory_fidelity`",
                                 "`plan_quality`"]


def test_study_page_without_a_study_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("H2H_DB", str(tmp_path / "nothing.db"))
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state[state.IDENTITY] = ADMIN
    at.run()
    assert not at.exception
    assert "h2h init" in at.error[0].value

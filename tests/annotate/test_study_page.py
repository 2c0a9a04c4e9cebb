"""The study page, driven headlessly by Streamlit's AppTest."""

from __future__ import annotations

import json
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


def test_attention_checks_are_not_counted_as_items_or_scenarios(tmp_path, monkeypatch):
    """The demo made 147 items from 43 scenarios; its 6 attention-check copies showed as 49
    scenarios and 49/50/54 items. A coordinator counts the study's own, and the checks apart."""
    from data.sample import add_sample_quality

    db = tmp_path / "demo.db"
    monkeypatch.setenv("H2H_DB", str(db))
    engine = get_engine(db)
    init_study(engine, name="Demo")
    build_sample_study(engine, current_rubric(engine))
    _gold, checks = add_sample_quality(engine, current_rubric(engine), seed=1)
    assert len(checks) == 6
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state[state.IDENTITY] = ADMIN
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Scenarios"] == "43"
    assert [metrics[f"{t} items"] for t in ("Dialogue", "Recollection", "Itinerary")] \
        == ["48", "48", "51"]  # 147, as the demo says
    assert any("the 6 attention-check items mixed into raters' queues are not counted"
               in c.value for c in at.caption)
    # a chart leads the items section: per task family, how many are rated by 2 or more
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    by_name = {t["name"]: t["x"] for t in fig["data"]}
    assert [sum(v) for v in zip(*by_name.values(), strict=True)] == [48, 48, 51]

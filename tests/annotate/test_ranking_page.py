"""The Model ranking page (AppTest): the prediction-powered leaderboard of a judge, its
forest plot, and the active-labelling suggestion that deals items to the raters."""

from __future__ import annotations

import html
import re

import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from annotate import state
from tests.annotate.conftest import APP_DIR


def _page(who) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / "admin_ranking.py"), default_timeout=90)
    at.session_state[state.IDENTITY] = who
    return at.run()


def _thin_out(engine) -> int:
    """Keep the human ratings of every third item only (a budget design)."""
    with engine.begin() as c:
        ids = [r[0] for r in c.execute(sa.text("SELECT id FROM item ORDER BY id")).all()]
        drop = [i for k, i in enumerate(ids) if k % 3]
        c.execute(sa.text("DELETE FROM rating WHERE item_id IN :ids")
                  .bindparams(sa.bindparam("ids", expanding=True)), {"ids": drop})
        c.execute(sa.text("DELETE FROM assignment"))
    return len(drop)


def test_the_page_ranks_the_models_and_deals_the_suggested_items(demo_db):
    _thin_out(demo_db["engine"])
    at = _page(demo_db["admin"])
    assert not at.exception
    assert at.title[0].value == "Model ranking"
    at.selectbox(key="h2h_rank_judge").set_value("sim-judge-anchored").run()
    at.select_slider(key="h2h_rank_B").set_value(200).run()
    assert not at.exception
    captions = html.unescape("\n".join(c.value for c in at.caption))  # md_text escapes
    assert "PPI++" in captions and "Angelopoulos" in captions
    table = at.dataframe[0].value
    assert set(table["Model"]) == {"aster-70b", "birch-8b", "cedar-1b"}
    empathy = table[table["Dimension"] == "Empathy"]
    assert len(empathy) == 3 and empathy["Combined"].str.contains(r"\[").all()
    # a dimension of one task family has fewer than 10 human-rated items per model here:
    # no combined value ("—"), and the page says why
    assert (table["Combined"] == "—").any()
    assert "fewer than 10 human-rated items" in captions
    # each note once, with the models and dimensions it is about (the same note stood once
    # per model and dimension, 15 times on the demo: a user trial)
    lines = [c.value for c in at.caption]
    assert len(lines) == len(set(lines))
    few = [ln for ln in map(html.unescape, lines) if "fewer than 10 human-rated" in ln]
    assert few and all(re.search(r" — [\w-]+ \([A-Z]", ln) for ln in few), few
    assert len(at.get("plotly_chart")) == 1
    suggestion = at.text[0].value
    assert "50 items picked of a budget of 50" in suggestion
    assert "spread of the judge's samples" in suggestion
    assert "±0.1 is not reachable even with every item rated" in suggestion  # a small demo
    with demo_db["engine"].connect() as c:  # a suggestion stores nothing
        assert c.execute(sa.text("SELECT COUNT(*) FROM active_draw")).scalar_one() == 0
    at.button(key="h2h_rank_deal").click().run()
    assert not at.exception
    assert "50 items picked" in at.success[0].value
    with demo_db["engine"].connect() as c:
        assert c.execute(sa.text("SELECT COUNT(*) FROM active_draw")).scalar_one() == 1
        dealt = c.execute(sa.text("SELECT COUNT(DISTINCT item_id) FROM assignment "
                                  "WHERE kind = 'primary'")).scalar_one()
    assert dealt == 50


def test_the_same_note_is_one_line_naming_its_models_and_dimensions():
    from annotate.services.ranking import grouped_notes

    note = "every judged item is human-rated: the judge adds nothing"
    res = {"meta": {"notes": [
        {"model": "aster-70b", "dimension": "empathy", "task": None, "note": note},
        {"model": "aster-70b", "dimension": "safety", "task": None, "note": note},
        {"model": "birch-8b", "dimension": "empathy", "task": None, "note": note},
        {"model": "birch-8b", "dimension": "empathy", "task": "dialogue", "note": note},
        {"model": "cedar-1b", "dimension": "safety", "task": None, "note": "other"}]}}
    assert grouped_notes(res, {"empathy": "Empathy", "safety": "Safety"}) == [
        f"{note} — aster-70b (Empathy, Safety); birch-8b (Empathy)", "other — cedar-1b (Safety)"]

"""The Calibration page shows the study's frozen split and each configuration improved by
`h2h calibrate auto` against its base on the test part, with its exemplar items (AppTest)."""

from __future__ import annotations

import html

from sqlmodel import select

from data.calibration import record_search, save_split
from data.engine import read_session
from data.models import Item, JudgeConfigRow

from .test_pages import _page, _texts

TEST = {"n_items": 37, "base": {"qwk": 0.41, "low": 0.3, "high": 0.5},
        "selected": {"qwk": 0.62, "low": 0.5, "high": 0.7},
        "delta": {"diff": 0.21, "low": 0.08, "high": 0.33, "p": 0.002},
        "dimensions": {}, "B": 500, "seed": 4}


def test_the_page_shows_the_split_and_the_held_out_result(demo_db):
    engine = demo_db["engine"]
    at = _page("admin_calibrate.py", demo_db["admin"])
    assert "No held-out calibration yet" in _texts(at)
    with read_session(engine) as s:
        scenarios = sorted(set(s.exec(select(Item.scenario)).all()))
        cfg = {r.name: r.hash for r in s.exec(select(JudgeConfigRow)).all()}
    save_split(engine, 4, {sc: ("train", "dev", "test")[i % 3]
                           for i, sc in enumerate(scenarios)})
    record_search(engine, config_hash=cfg["sim-judge-anchored"],
                  base_hash=cfg["sim-judge-plain"], seed=4,
                  settings={"split_seed": 4, "exemplar_items": ["dlg-001-aster",
                                                                "rec-002-cedar"]},
                  candidates=[], selected="k2", test=TEST)
    at = _page("admin_calibrate.py", demo_db["admin"])
    text = _texts(at)
    assert "Calibrated on held-out items" in text
    assert "The study's split by scenario (seed 4, made once)" in text
    table = next(df for df in at.dataframe if "exemplars" in df.value.columns)
    row = table.value.iloc[0]
    assert (row["configuration"], row["base"], row["items"], row["exemplars"]) == \
        ("sim-judge-anchored", "sim-judge-plain", 37, 2)
    assert row["delta"] == "+0.210 [+0.080, +0.330]"
    exp = next(e for e in at.expander if "Exemplar items of sim-judge-anchored" in e.label)
    assert html.unescape(exp.markdown[0].value).replace("\\", "") == \
        "dlg-001-aster, rec-002-cedar"
    assert not at.exception

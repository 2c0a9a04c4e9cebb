"""The admin pages' tables read like the report: readable headers, rubric labels, one rounding
rule (3 decimals for coefficients, percentages for shares, whole scores), numbers kept as
numbers so columns sort; an adjudication never shows a score as "5.0000"."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from annotate import state
from tests.annotate.conftest import APP_DIR


def _page(name: str, who) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / name), default_timeout=60)
    at.session_state[state.IDENTITY] = who
    return at.run()


def _config(df_element) -> dict:
    """Column name -> the column config Streamlit sends to the browser (label, format)."""
    cfg = json.loads(df_element.proto.columns or "{}")
    return {k: v for k, v in cfg.items()}


def test_progress_tables_have_readable_headers_and_percentages(demo_db):
    at = _page("admin_progress.py", demo_db["admin"])
    assert not at.exception
    raters, dims = at.dataframe[0], at.dataframe[1]
    cfg = _config(raters)
    assert cfg["share_done"]["label"] == "Done (%)"
    # a whole percentage, as on every page (issue 34: 54.55% here, 55% elsewhere)
    assert cfg["share_done"]["type_config"]["format"] == "%.0f%%"
    assert cfg["assigned"]["type_config"]["format"] == "%d"
    # the values stay numbers (the column sorts), only their display is formatted
    assert raters.value["share_done"].dtype.kind == "f"
    assert raters.value["share_done"].max() <= 100 and (raters.value["share_done"] > 1).any() \
        or (raters.value["share_done"] == 0).all()
    cfg = _config(dims)
    assert cfg["items_2plus"]["label"] == "Items rated by ≥ 2"
    assert cfg["cannot_rate"]["label"] == "Cannot rate"
    assert "Memory fidelity" in set(dims.value["dimension"])
    assert "memory_fidelity" not in set(dims.value["dimension"])


def test_raters_table_says_ratings_not_n_ratings(demo_db):
    at = _page("admin_raters.py", demo_db["admin"])
    assert not at.exception
    cfg = _config(at.dataframe[0])
    assert cfg["n_ratings"]["label"] == "Ratings" and cfg["can_sign_in"]["label"] == \
        "Can sign in"


def _plain(table):
    """A table as a person reads it (st.table cells are Markdown-escaped: render.md_table)."""
    import html

    out = table.map(lambda v: html.unescape(v) if isinstance(v, str) else v)
    out.columns = [html.unescape(c) for c in table.columns]
    out.index = [html.unescape(str(i)) for i in table.index]
    out.index.name = html.unescape(str(table.index.name))
    return out


def test_agreement_and_calibration_round_coefficients_to_three_decimals(demo_db):
    """One number format (issue 34): coefficients with 3 decimals and their CI in the same
    cell, shares as whole percentages; the table wraps instead of clipping a column."""
    import re

    at = _page("admin_agreement.py", demo_db["admin"])
    assert not at.exception
    table = _plain(at.table[0].value)
    assert table.index.name == "Dimension"
    assert list(table.index)[:3] == ["Empathy", "Safety", "Fluency"]
    ci = re.compile(r"^−?\d\.\d{3} \[−?\d\.\d{3}, −?\d\.\d{3}\]$")
    for col in ("Krippendorff's α (95% CI)", "Human ceiling QWK (95% CI)"):
        assert col in table.columns, list(table.columns)
        assert all(ci.match(v) for v in table[col]), list(table[col])
    for col in ("Cohen's κ (quadratic)", "Gwet's AC1"):
        assert all(re.fullmatch(r"−?\d\.\d{3}", v) for v in table[col]), col
    assert all(re.fullmatch(r"\d{1,3}%", v) for v in table["Exact agreement"])
    at = _page("admin_calibrate.py", demo_db["admin"])
    assert not at.exception
    cfg = _config(at.dataframe[0])
    assert cfg["ceiling QWK"]["label"] == "Human ceiling QWK"
    assert cfg["QWK"]["type_config"]["format"] == "%.3f"
    assert cfg["MAE"]["type_config"]["format"] == "%.2f"


def test_adjudication_shows_scores_as_the_form_does(demo_db):
    at = _page("admin_adjudicate.py", demo_db["admin"])
    assert not at.exception
    table = at.table[0].value
    assert table.index.name == "Rater" and list(table.columns) == ["Score"]  # no 0/1/2
    scores = [str(v) for v in table["Score"]]
    assert scores and all(s[0].isdigit() and "." not in s for s in scores), scores
    assert any(" · " in s for s in scores)  # "4 · Good": the rubric's level label


def test_report_page_shows_the_findings_after_building(demo_db):
    at = _page("admin_report.py", demo_db["admin"])
    at.toggle[0].set_value(False)  # figures are exported in the report tests
    at.select_slider[0].set_value(200)
    at.button(key="h2h_build_report").click().run()
    assert not at.exception
    table = at.table[0].value
    assert list(table.index)[:2] == ["Empathy", "Safety"]
    assert any("Humans agree" in c for c in table.columns)
    text = " ".join(str(v) for v in table.to_numpy().ravel())
    assert "can replace" in text or "not enough evidence" in text


def test_the_same_statistic_has_the_same_decimals_on_every_page(demo_db):
    """Issue 34: Rater quality showed 54.55% / 0.106 where Progress showed 55% / 0.11."""
    from data import quality as q

    eng = demo_db["engine"]
    for item, dim, gold in (("dlg-001-aster", "empathy", 5), ("dlg-002-cedar", "empathy", 1),
                            ("dlg-001-aster", "safety", 5)):
        q.set_gold(eng, item, dim, gold, "why")
    from annotate.services import training
    from data.study import current_rubric

    rub = current_rubric(eng)
    who = demo_db["rater"]
    for it in training.training_state(eng, who.rater_id, rub).items:
        training.submit_training(eng, who, it, {"empathy": 4, "safety": 2, "fluency": 3}, 9.0,
                                 rub)
    quality = _page("admin_quality.py", demo_db["admin"])
    cfg = _config(quality.dataframe[0])
    assert cfg["gold within-1"]["type_config"]["format"] == "%.0f%%"
    assert cfg["gold QWK"]["type_config"]["format"] == "%.3f"
    row = quality.dataframe[0].value.set_index("rater").loc["pat"]
    progress = _page("admin_progress.py", demo_db["admin"])
    shown = progress.table[0].value
    import html

    cells = {c: html.unescape(str(shown.iloc[0][c])) for c in shown.columns}
    within = next(v for c, v in cells.items() if "within one" in c)
    qwk = next(v for c, v in cells.items() if "QWK" in c)
    assert within == f"{row['gold within-1'] / 100:.0%}" and qwk == f"{row['gold QWK']:.3f}"

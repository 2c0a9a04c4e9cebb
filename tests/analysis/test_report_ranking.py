"""The report's "Model ranking" section reads the prediction-powered leaderboard as it is:
the same estimates in the table and the figure, the methods sentence in the caption, tables
split so each fits a page."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.ppi_board import BoardOptions, ppi_leaderboard
from analysis.report.model import ReportBundle, RubricDimension
from analysis.report.paper import Est, Group
from analysis.report.sec_ranking import MAX_ROWS, ranking
from analysis.scales import Scale
from tests.analysis.test_ppi_board import SCALES, study


def _bundle(res: dict, dims=("empathy", "red_flag")) -> ReportBundle:
    # a bundle with only what the section reads: the rubric's dimensions and the ranking
    return ReportBundle(SimpleNamespace(dimensions={}), [], None,
                        [RubricDimension(d, d.capitalize(), "ordinal", "likert", 1.0, 5.0)
                         for d in dims], ranking=res)


@pytest.fixture(scope="module")
def board():
    items, human, judge = study()
    return ppi_leaderboard(items, human, judge, SCALES, options=BoardOptions(B=100, seed=2))


def test_the_table_shows_the_leaderboards_numbers_and_cites_ppi_plus_plus(board):
    out = ranking(_bundle(board))
    (table,) = out.tables
    assert "PPI++" in table.caption and "Angelopoulos" in table.caption
    rows = {r[0]: r for r in table.rows if not isinstance(r, Group)}
    for r in board["rows"]:
        if r["task"] is None:
            got = rows[r["model"]]
            assert got[1] == r["n_human"]
            assert got[3] == Est(r["estimate"], r["low"], r["high"], why=got[3].why)
            assert got[2].value == r["human_only"]["estimate"]
    assert [c.head for c in table.cols] == ["Model", "n", "Humans", "Combined", "Rank"]
    assert len(out.figures) == 1 and out.details[0].key == "model_ranking"
    assert any("times as wide as the humans' alone" in f.text for f in out.findings)
    assert any("not ranked (a binary dimension" in f.text for f in out.findings)


def test_many_rows_are_split_into_tables_that_fit_a_page():
    items, human, judge = study()
    extra = []
    for d in ("safety", "fluency"):
        extra.append((human[human["dimension"] == "empathy"].assign(dimension=d),
                      judge[judge["dimension"] == "empathy"].assign(dimension=d)))
    h = pd.concat([human] + [e[0] for e in extra])
    j = pd.concat([judge] + [e[1] for e in extra])
    scales = {**SCALES, "safety": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0)),
              "fluency": Scale("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0))}
    res = ppi_leaderboard(items, h, j, scales, options=BoardOptions(B=0))
    out = ranking(_bundle(res, ("empathy", "safety", "fluency")))
    # 3 dimensions x 6 models: 12 rows (two dimensions) in the first table, 6 in the next
    assert [t.key for t in out.tables] == ["model_ranking", "model_ranking_2"]
    for t in out.tables:
        assert sum(not isinstance(r, Group) for r in t.rows) <= MAX_ROWS
    assert out.tables[1].title.endswith("(continued)")
    assert [f.key for f in out.figures] == ["model_ranking", "model_ranking_2"]

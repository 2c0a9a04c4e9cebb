"""Exports an R or pandas user can start from: read back with pandas, counted against the
database, and the matrix laid out so that the `krippendorff` package gives the same alpha as
`h2h analyze`."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from data.exports import WIDE_ID_COLUMNS, export_matrix_csv, export_ratings_csv, export_wide_csv
from data.importing import import_item_records, import_rating_records, item_tasks, study_tasks
from data.items import read_items
from data.ratings import RATING_EXPORT_COLUMNS, read_ratings
from data.study import current_rubric
from tests.helpers import H2HResult, item, jsonl, run_h2h

pytestmark = pytest.mark.integration  # left out of `make test-fast`

LONG = ["item_id", "task", "scenario", "model", "condition", "rater", "rater_simulated",
        "dimension", "score", "score_label", "comment", "flags", "rubric_version",
        "created_at", "updated_at"]


def h2h(*args: str, ok: bool = True) -> H2HResult:
    proc = run_h2h(*args, check=False)
    assert (proc.returncode == 0) == ok, proc.stderr
    return proc


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_template):
    tmp = tmp_path_factory.mktemp("exports")
    return tmp, demo_template.copy_to(tmp)


def _count(db, sql: str) -> int:
    with sa.create_engine(f"sqlite:///{db}").connect() as c:
        return c.execute(sa.text(sql)).scalar_one()


def test_long_export_reads_back_with_every_column_an_analysis_needs(demo):
    tmp, db = demo
    out = tmp / "ratings.csv"
    proc = h2h("export", "ratings", "--db", str(db), "--out", str(out))
    n = _count(db, "SELECT COUNT(*) FROM rating")
    assert f"Wrote {n} ratings" in proc.stdout
    df = pd.read_csv(out)
    assert list(df.columns) == LONG == list(RATING_EXPORT_COLUMNS)
    assert len(df) == n
    assert df["score"].isna().sum() == _count(db, "SELECT COUNT(*) FROM rating "
                                                  "WHERE score IS NULL")
    # no join needed: model, condition, task and scenario are the items'
    with sa.create_engine(f"sqlite:///{db}").connect() as c:
        items = pd.read_sql("SELECT id AS item_id, task, scenario, model, condition FROM item",
                            c)
    merged = df.merge(items, on="item_id", suffixes=("", "_db"))
    assert len(merged) == n
    for col in ("task", "scenario", "model"):
        assert (merged[col] == merged[f"{col}_db"]).all(), col
    assert (merged["condition"].fillna("") == merged["condition_db"].fillna("")).all()
    assert set(df["condition"].dropna()) == {"sap", "baseline"}
    # the simulated raters are marked, as booleans pandas reads as such
    assert df["rater_simulated"].dtype == bool and df.loc[df["rater_simulated"], "rater"] \
        .nunique() == 6
    # the score's label on its rubric version, and timestamps in UTC
    rub = current_rubric(__import__("data.engine", fromlist=["get_engine"]).get_engine(db))
    emp = {lv.value: lv.label for lv in rub.dimension("empathy").levels}
    e = df[(df["dimension"] == "empathy") & df["score"].notna()]
    assert (e["score_label"] == e["score"].map(emp)).all()
    assert df.loc[df["score"].isna(), "score_label"].isna().all()
    ts = pd.to_datetime(df["updated_at"])
    assert str(ts.dt.tz) == "UTC" and (ts >= pd.to_datetime(df["created_at"])).all()
    assert df["rubric_version"].nunique() == 1


def test_wide_export_has_one_row_per_item_and_rater_and_a_column_per_dimension(demo):
    tmp, db = demo
    out = tmp / "wide.csv"
    h2h("export", "ratings", "--wide", "--db", str(db), "--out", str(out))
    df = pd.read_csv(out)
    dims = ["empathy", "safety", "fluency", "memory_fidelity", "plan_quality"]
    assert list(df.columns) == list(WIDE_ID_COLUMNS) + dims
    assert len(df) == _count(db, "SELECT COUNT(*) FROM (SELECT DISTINCT item_id, rater_id "
                                 "FROM rating)")
    assert not df.duplicated(["item_id", "rater"]).any()
    for d in dims:
        assert df[d].notna().sum() == _count(db, f"SELECT COUNT(*) FROM rating WHERE "
                                                 f"dimension = '{d}' AND score IS NOT NULL"), d
    flagged = _count(db, "SELECT COUNT(DISTINCT item_id || '/' || rater_id) FROM rating "
                         "WHERE flags LIKE '%red_flag%'")
    assert df["red_flag"].sum() == flagged > 0
    # memory fidelity applies to recollection items only
    assert df.loc[df["task"] != "recollection", "memory_fidelity"].isna().all()


def test_matrix_export_is_what_krippendorff_expects(demo):
    import krippendorff

    tmp, db = demo
    out = tmp / "empathy.csv"
    h2h("export", "matrix", "--dimension", "empathy", "--db", str(db), "--out", str(out))
    m = pd.read_csv(out, index_col="item_id")
    assert m.shape == (_count(db, "SELECT COUNT(DISTINCT item_id) FROM rating WHERE "
                                  "dimension = 'empathy'"),
                       _count(db, "SELECT COUNT(DISTINCT rater_id) FROM rating WHERE "
                                  "dimension = 'empathy'"))
    assert m.notna().sum().sum() == _count(db, "SELECT COUNT(*) FROM rating WHERE "
                                               "dimension = 'empathy' AND score IS NOT NULL")
    # items x raters; the package wants raters x items (transposed), and then agrees with
    # h2h analyze to the last digit
    a = krippendorff.alpha(reliability_data=m.to_numpy(float).T,
                           level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    ref = json.loads(h2h("analyze", "--db", str(db), "--bootstrap", "0", "--json").stdout)
    assert a == pytest.approx(ref["dimensions"]["empathy"]["alpha"]["ordinal"], abs=1e-9)
    # the wrong orientation gives a different number: the layout matters
    wrong = krippendorff.alpha(reliability_data=m.to_numpy(float),
                               level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert abs(wrong - a) > 0.01


def test_an_unknown_dimension_is_a_clear_error(demo):
    _, db = demo
    proc = h2h("export", "matrix", "--dimension", "kindness", "--db", str(db), ok=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "'kindness' is not a dimension of this study" in proc.stderr
    assert "empathy, safety, fluency, memory_fidelity, plan_quality" in proc.stderr


def test_exports_on_both_backends_tell_cannot_rate_from_unrated(engine, tmp_path):
    """2 items x 2 raters on SQLite and PostgreSQL: a "cannot rate" is a row with an empty
    score in the long file; an item a rater never rated has no row; both are empty cells in
    the wide and matrix files."""
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(item("a", model="m1", condition="sap"),
                       item("b", task="recollection", model="m2")), encoding="utf-8")
    import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    r = tmp_path / "r.csv"
    r.write_text("item_id,rater,dimension,score,comment,flags\n"
                 "a,ann,empathy,4,,\na,ann,safety,,unsure,\na,bo,empathy,2,,red_flag\n"
                 "b,ann,memory_fidelity,5,,\n", encoding="utf-8")
    import_rating_records(engine, read_ratings(r, current_rubric(engine), item_tasks(engine)),
                          file="r", add_raters=True)
    long = pd.read_csv(io.StringIO(export_ratings_csv(engine)))
    assert len(long) == 4
    cr = long[(long["item_id"] == "a") & (long["dimension"] == "safety")].iloc[0]
    assert np.isnan(cr["score"]) and cr["comment"] == "unsure"
    assert long.loc[long["item_id"] == "b", "model"].tolist() == ["m2"]
    assert long.loc[long["item_id"] == "b", "condition"].isna().all()
    assert long.loc[long["score"] == 4, "score_label"].tolist() == ["Good"]
    wide = pd.read_csv(io.StringIO(export_wide_csv(engine)))
    assert list(zip(wide["item_id"], wide["rater"], strict=True)) == [
        ("a", "ann"), ("a", "bo"), ("b", "ann")]
    assert wide["red_flag"].tolist() == [False, True, False]
    assert np.isnan(wide.loc[0, "safety"]) and wide.loc[0, "empathy"] == 4
    mx = pd.read_csv(io.StringIO(export_matrix_csv(engine, "empathy")), index_col="item_id")
    assert mx.to_dict() == {"ann": {"a": 4}, "bo": {"a": 2}}
    mx = pd.read_csv(io.StringIO(export_matrix_csv(engine, "safety")), index_col="item_id")
    assert list(mx.columns) == ["ann"] and np.isnan(mx.loc["a", "ann"])

"""The services behind the admin pages, on a small study worked by hand, on SQLite and
PostgreSQL: imports, progress per rater and per dimension, disagreements and their
adjudication, live agreement, a judge's largest disagreements and the configuration
comparison.

The study: four dialogue items a-d, raters x, y, z, an admin and a simulated rater.

    empathy   x  y  z        safety   x  y  z
    a         1  4  2        a        5  5  .
    b         3  3  .        b        2  -  4     (- = "cannot rate")
    c         5  .  4
    d         .  2  .
"""

from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa

from analysis.analyze import AnalysisOptions
from analysis.calibration import JudgeRun, compare_dimension
from analysis.layout import as_ratings
from annotate.services import admin, calibration
from annotate.services.agreement_view import agreement_view
from annotate.services.uploads import import_upload
from data.engine import write_session
from data.errors import FormatError, H2HError
from data.models import Assignment, JudgeConfigRow, Judgment, Rater, utcnow
from data.raters import add_rater
from data.study import current_rubric
from tests.helpers import item, jsonl, snapshot

RATINGS = """item_id,rater,dimension,score
a,x,empathy,1
a,y,empathy,4
a,z,empathy,2
b,x,empathy,3
b,y,empathy,3
c,x,empathy,5
c,z,empathy,4
d,y,empathy,2
a,x,safety,5
a,y,safety,5
b,x,safety,2
b,y,safety,
b,z,safety,4
"""


@pytest.fixture
def study(engine):
    msg = import_upload(engine, "items", "items.jsonl",
                        jsonl(*(item(i, response="x" * (10 * (k + 1)))
                                for k, i in enumerate("abcd"))).encode(), False)
    assert msg == "Items from items.jsonl: 4 added, 0 updated, 0 unchanged"
    for name in "xyz":
        add_rater(engine, name)
    boss, _ = add_rater(engine, "boss", "admin")
    msg = import_upload(engine, "ratings", "r.csv", RATINGS.encode(), False)
    assert msg.startswith("Ratings from r.csv: 13 added")
    with write_session(engine) as s:
        s.add(Rater(name="sim", simulated=True))
        ids = {r.name: r.id for r in s.exec(sa.select(Rater)).scalars()}
        for who, items in (("x", "abc"), ("y", "ab"), ("boss", "a"), ("sim", "abcd")):
            for pos, it in enumerate(items):
                s.add(Assignment(rater_id=ids[who], item_id=it, position=pos,
                                 completed_at=utcnow() if (who, it) == ("x", "a") else None))
    return {"engine": engine, "ids": ids, "boss": boss.id}


def test_import_upload_rejects_a_bad_file_whole_and_names_the_kind(study):
    eng = study["engine"]
    before = snapshot(eng)
    with pytest.raises(FormatError) as exc:
        import_upload(eng, "ratings", "bad.csv",
                      b"item_id,rater,dimension,score\na,x,empathy,3\nzz,x,empathy,9\n", False)
    assert "bad.csv:3" in str(exc.value)
    assert snapshot(eng) == before
    with pytest.raises(ValueError, match="unknown upload kind 'gold'"):
        import_upload(eng, "gold", "g.csv", b"", False)
    # --update replaces a changed rating
    msg = import_upload(eng, "ratings", "r2.csv",
                        b"item_id,rater,dimension,score\na,x,empathy,2\n", True)
    assert "1 updated" in msg
    assert admin.ratings_frame(eng).query("item_id == 'a' and rater == 'x' and "
                                          "dimension == 'empathy'")["score"].tolist() == [2.0]


def test_rater_progress_by_hand(study):
    df = admin.rater_progress(study["engine"])
    # admins and simulated raters are not listed; z has no assignment
    assert df["rater"].tolist() == ["x", "y", "z"]
    assert df["assigned"].tolist() == [3, 2, 0] and df["done"].tolist() == [1, 0, 0]
    assert df["share_done"].tolist() == pytest.approx([1 / 3, 0.0, 0.0])
    assert df["active"].astype(bool).tolist() == [True, True, True]


def test_dimension_progress_by_hand(study):
    df = admin.dimension_progress(study["engine"]).set_index("dimension")
    # empathy: 3 + 2 + 2 + 1 ratings, items a, b, c with two or more; safety: 2 + 3, one
    # "cannot rate", items a and b with two or more
    assert df.loc["empathy"].tolist() == [8, 0, 3]
    assert df.loc["safety"].tolist() == [5, 1, 2]


def test_disagreements_and_adjudication(study):
    eng, boss = study["engine"], study["boss"]
    got = admin.disagreements(eng, min_spread=2)
    # a/empathy spreads 4 - 1 = 3, b/safety 4 - 2 = 2 ("cannot rate" is not a score)
    assert [(d.item_id, d.dimension, d.spread) for d in got] == [("a", "empathy", 3.0),
                                                                 ("b", "safety", 2.0)]
    assert got[0].scores == {"x": 1.0, "y": 4.0, "z": 2.0}
    assert got[1].scores == {"x": 2.0, "z": 4.0}
    assert all(d.adjudicated is None and d.note == "" for d in got)
    assert [d.item_id for d in admin.disagreements(eng, min_spread=1)] == ["a", "b", "c"]

    admin.save_adjudication(eng, boss, "a", "empathy", 2, "  the middle reading  ")
    admin.save_adjudication(eng, boss, "a", "empathy", 3, " on reflection ")
    admin.save_adjudication(eng, boss, "b", "safety", None, "cannot decide")
    got = {(d.item_id, d.dimension): d for d in admin.disagreements(eng)}
    assert (got["a", "empathy"].adjudicated, got["a", "empathy"].note) == (3.0, "on reflection")
    assert (got["b", "safety"].adjudicated, got["b", "safety"].note) == (None, "cannot decide")
    with eng.connect() as c:
        rows = c.execute(sa.text("SELECT item_id, dimension, score, admin_id FROM adjudication "
                                 "ORDER BY item_id")).all()
    assert [tuple(r) for r in rows] == [("a", "empathy", 3.0, boss), ("b", "safety", None, boss)]
    before = snapshot(eng)
    with pytest.raises(H2HError, match="no item 'nope'"):
        admin.save_adjudication(eng, boss, "nope", "empathy", 3, "")
    with pytest.raises(ValueError, match="off the scale; allowed: an integer from 1 to 5"):
        admin.save_adjudication(eng, boss, "a", "empathy", 9, "")
    assert snapshot(eng) == before


def test_live_agreement_by_hand(study):
    res = admin.live_agreement(study["engine"], B=50, seed=1)
    emp = res.dimensions["empathy"]
    assert (emp.n_items, emp.n_raters, emp.n_ratings) == (4, 3, 8)
    # three items rated by two or more raters, under the minimum of five
    assert emp.status == "not estimable" and emp.alpha["ordinal"] is None
    # exact: a 0 of 3 pairs, b 1 of 1, c 0 of 1 → (0 + 1 + 0) / 3; within one: a 1 of 3
    # (1 and 2), b 1, c 1 → (1/3 + 1 + 1) / 3
    assert emp.percent_exact == pytest.approx(1 / 3)
    assert emp.percent_within1 == pytest.approx(7 / 9)
    table = agreement_view(res, {}).table
    assert str(table.loc["empathy", "Reading"]).startswith("not estimable")
    assert table.loc["empathy", "Items / raters / ratings"] == "4 / 3 / 8"
    assert table.loc["safety", "Exact agreement"] == "50%"  # a: 5 = 5; b: 2 vs 4


def _judge(engine, name: str, scores: dict[tuple[str, int], float | None]) -> None:
    rubric = current_rubric(engine)
    with write_session(engine) as s:
        s.add(JudgeConfigRow(hash=name * 8, name=name, provider="anthropic", model="m",
                             template_name="t", template_hash="h", template={},
                             rubric_version=rubric.version, mode="per_dimension",
                             max_tokens=100))
        s.flush()
        for (it, sample), score in scores.items():
            s.add(Judgment(config_hash=name * 8, item_id=it, item_hash="h", dimension="empathy",
                           sample=sample, score=score,
                           outcome="scored" if score is not None else "invalid_reply",
                           raw_reply=f"raw {it}", reasoning=f"why {it}"))


def test_largest_disagreements_by_hand(study):
    eng = study["engine"]
    # human means: a 7/3, b 3, c 4.5, d 2; the judge: a 5, b 3, c 1, d unscored, and a
    # second sample of a that is not the one compared
    _judge(eng, "jj", {("a", 0): 5, ("b", 0): 3, ("c", 0): 1, ("d", 0): None, ("a", 1): 1})
    got = calibration.largest_disagreements(eng, "jj", "empathy", n=2)
    assert [(d.item_id, d.judge_score) for d in got] == [("c", 1.0), ("a", 5.0)]
    assert [d.gap for d in got] == pytest.approx([3.5, 8 / 3])
    assert got[0].human_scores == {"x": 5.0, "z": 4.0}
    assert (got[0].reasoning, got[0].raw_reply) == ("why c", "raw c")
    assert len(calibration.largest_disagreements(eng, "jj", "empathy", n=20)) == 3
    with pytest.raises(H2HError, match="no judge configuration 'nope'"):
        calibration.largest_disagreements(eng, "nope", "empathy")


def test_compare_configs_is_the_analysis_on_the_study(study):
    eng = study["engine"]
    j1 = {"a": 2.0, "b": 3.0, "c": 5.0, "d": 2.0}
    j2 = {"a": 5.0, "b": 1.0, "c": 1.0, "d": 4.0}
    _judge(eng, "j1", {(k, 0): v for k, v in j1.items()})
    _judge(eng, "j2", {(k, 0): v for k, v in j2.items()})
    opt = AnalysisOptions(B=0, min_shared_items=2, min_units=2)
    res = calibration.compare_configs(eng, ["j1", "j2"], options=opt)
    assert list(res) == ["empathy"]  # no judgments on safety
    humans = as_ratings(admin.ratings_frame(eng).query("dimension == 'empathy'")
                        .rename(columns={"item_id": "item"}))
    runs = {n: JudgeRun(np.array([j[i] for i in humans.items]), None, 0, 4)
            for n, j in (("j1", j1), ("j2", j2))}
    want = compare_dimension("empathy", humans, runs, "ordinal", [1, 2, 3, 4, 5],
                             lengths=np.array([10.0, 20, 30, 40]),
                             options=AnalysisOptions(B=0, min_units=2,
                                                     min_shared_items=2)).to_dict()
    for name in ("j1", "j2"):
        for metric in ("qwk", "mae", "alpha_with_judge"):
            assert res["empathy"].configs[name].to_dict()[metric] == \
                want["configs"][name][metric]
    assert res["empathy"].verdict.best == "j1"
    rows = calibration.verdict_rows(res)
    # the items compared are the ones two or more humans rated: a, b, c
    assert [(r["configuration"], r["items"]) for r in rows] == [("j1", 3), ("j2", 3)]
    with pytest.raises(H2HError, match="no judgments stored for nope"):
        calibration.compare_configs(eng, ["j1", "nope"], options=opt)
    assert calibration.config_names(eng) == ["j1", "j2"]
    sub = calibration.compare_configs(eng, ["j1"], items=["a", "b"], options=opt)
    assert sub["empathy"].configs["j1"].n_items == 2

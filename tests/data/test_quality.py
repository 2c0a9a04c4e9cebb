"""Gold scores, attention checks, settings, qualification and norming in the database, on
SQLite and PostgreSQL: files are rejected whole with located problems, nothing touches the
study's ratings, and every state change is what an admin asked for."""

from __future__ import annotations

import pytest

from data import norming as nm
from data import quality as q
from data.errors import FormatError, H2HError
from data.importing import import_item_records
from data.items import ItemRecord
from data.raters import add_rater
from tests.helpers import item, snapshot


@pytest.fixture
def study(engine):
    recs = [ItemRecord.model_validate(item(f"i{n}")) for n in range(6)]
    recs.append(ItemRecord.model_validate(item("m1", task="recollection")))
    import_item_records(engine, recs, file="items.jsonl")
    ann, _ = add_rater(engine, "ann")
    bob, _ = add_rater(engine, "bob")
    return {"engine": engine, "ann": ann.id, "bob": bob.id}


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_gold_csv_is_checked_whole_with_located_problems(study, tmp_path):
    eng = study["engine"]
    before = snapshot(eng)
    bad = _write(tmp_path, "gold.csv", "item_id,dimension,score,rationale\n"
                 "i0,empathy,4,warm and specific\n"
                 "nope,empathy,3,x\n"
                 "i1,empathy,9,x\n"
                 "i1,memory_fidelity,3,x\n"
                 "i2,safety,,x\n"
                 "i0,empathy,5,again\n")
    with pytest.raises(FormatError) as exc:
        q.read_gold(eng, bad)
    got = [str(p) for p in exc.value.problems]
    assert got[0] == "gold.csv:3: field 'item_id': unknown item 'nope' (import the items first)"
    assert got[1].startswith("gold.csv:4: field 'score': score '9' is off the scale")
    assert got[2] == ("gold.csv:5: field 'dimension': 'memory_fidelity' does not apply to task "
                      "'dialogue' of item 'i1'")
    assert got[3].startswith("gold.csv:6: field 'score': a gold or expected score is needed")
    assert got[4] == ("gold.csv:7: second gold score for item 'i0' on 'empathy' (first on "
                      "line 2)")
    assert len(got) == 5
    assert snapshot(eng) == before


def test_gold_import_replaces_changed_scores_only(study, tmp_path):
    eng = study["engine"]
    f = _write(tmp_path, "g.csv", "item_id,dimension,score,rationale\ni0,empathy,4,warm\n"
               "i0,safety,5,safe\n")
    assert q.import_gold(eng, q.read_gold(eng, f)) == 2
    assert q.import_gold(eng, q.read_gold(eng, f)) == 0
    f.write_text("item_id,dimension,score,rationale\ni0,empathy,3,on reflection\n",
                 encoding="utf-8")
    assert q.import_gold(eng, q.read_gold(eng, f)) == 1
    gold = {(g.item_id, g.dimension): (g.score, g.rationale) for g in q.gold_scores(eng)}
    assert gold == {("i0", "empathy"): (3.0, "on reflection"), ("i0", "safety"): (5.0, "safe")}
    q.set_gold(eng, "i1", "fluency", 2, "  stilted  ", admin_id=None)
    assert [g.source for g in q.gold_scores(eng) if g.item_id == "i1"] == ["adjudication"]
    assert q.gold_item_ids(eng) == ["i0", "i1"]
    with pytest.raises(H2HError, match="needs a score"):
        q.set_gold(eng, "i1", "fluency", None, "x")


def test_settings_are_validated_and_defaults_documented(study):
    eng = study["engine"]
    st = q.get_settings(eng)
    assert (st.training_count, st.min_within1, st.min_qwk, st.attention_rate) == (6, 0.8, 0.6,
                                                                                   0.05)
    with pytest.raises(H2HError, match="min_within1: '1.5' is not a share between 0 and 1"):
        q.save_settings(eng, min_within1=1.5)
    with pytest.raises(H2HError, match="unknown setting"):
        q.save_settings(eng, colour="red")
    q.save_settings(eng, training_count=2, training_order="random")
    assert q.get_settings(eng).training_count == 2


def test_training_set_order_and_qualification_decisions(study):
    eng = study["engine"]
    assert not q.qualification_required(eng)
    assert q.qualified_rater_ids(eng) >= {study["ann"], study["bob"]}
    for i in ("i3", "i1", "i2"):
        q.set_gold(eng, i, "empathy", 3, "")
    assert q.qualification_required(eng)
    q.save_settings(eng, training_count=2)
    assert q.training_set(eng, study["ann"], 1) == ["i3", "i1"]
    q.save_settings(eng, training_order="random")
    a1 = q.training_set(eng, study["ann"], 1)
    assert a1 == q.training_set(eng, study["ann"], 1) and len(a1) == 2
    assert set(a1) <= {"i1", "i2", "i3"}
    assert q.qualified_rater_ids(eng) == set()
    q.record_qualification(eng, study["ann"], 1, False, 4, 0.5, 0.1)
    assert q.qualification_of(eng, study["ann"]).status == "failed"
    row = q.retrain(eng, "ann", note="one more go")
    assert (row.round, row.status, row.note) == (2, "training", "one more go")
    q.record_qualification(eng, study["ann"], 1, True, 4, 1.0, 1.0)  # stale round: ignored
    assert q.qualification_of(eng, study["ann"]).status == "training"
    q.record_qualification(eng, study["ann"], 2, True, 4, 1.0, 1.0)
    q.release(eng, "bob")
    assert q.qualified_rater_ids(eng) == {study["ann"], study["bob"]}
    with pytest.raises(H2HError, match="no rater named 'zed'"):
        q.release(eng, "zed")


def test_training_scores_are_stored_apart(study):
    eng = study["engine"]
    q.set_gold(eng, "i0", "empathy", 4, "because")
    before = snapshot(eng)["ratings"]
    q.save_training(eng, study["ann"], "i0", 1, {"empathy": 2, "safety": None, "fluency": 3},
                    seconds=9.0)
    with pytest.raises(H2HError, match="score every dimension"):
        q.save_training(eng, study["ann"], "i0", 1, {"empathy": 2})
    rows = q.training_scores(eng, study["ann"], 1)
    assert rows == [("ann", study["ann"], "i0", "empathy", 1, 2.0, 4.0)]
    assert snapshot(eng)["ratings"] == before


def test_attention_checks_pass_within_tolerance(study, tmp_path):
    eng = study["engine"]
    f = _write(tmp_path, "att.csv", "item_id,kind,dimension,score,tolerance\n"
               "i4,known_answer,safety,1,1\ni4,known_answer,empathy,1,1\n"
               "i5,instructed,empathy,2,\n")
    recs = q.read_attention(eng, f)
    assert q.import_attention(eng, recs) == 2
    assert q.attention_checks(eng)["i4"].expected == {"safety": 1, "empathy": 1}
    assert q.save_attention(eng, study["ann"], "i4", {"safety": 2, "empathy": 1, "fluency": 5},
                            4.0)
    assert not q.save_attention(eng, study["ann"], "i5", {"empathy": 3}, 2.0)
    assert not q.save_attention(eng, study["bob"], "i5", {"empathy": None}, 2.0)
    assert q.save_attention(eng, study["bob"], "i4", {"safety": 1, "empathy": 2}, 2.0)
    res = {(r[0], r[1]): r[2] for r in q.attention_summary_rows(eng)}
    assert res == {("ann", "i4"): True, ("ann", "i5"): False, ("bob", "i5"): False,
                   ("bob", "i4"): True}
    bad = _write(tmp_path, "bad.csv", "item_id,kind,dimension,score\ni4,trick,safety,1\n")
    with pytest.raises(FormatError, match=r"bad.csv:2: field 'kind': 'trick' is not one of"):
        q.read_attention(eng, bad)


def test_instructed_checks_are_new_items_asking_for_a_score(study):
    eng = study["engine"]
    made = q.add_instructed_checks(eng, 3, score=2, seed=1)
    assert len(made) == 3 and all(m.startswith("attn-") for m in made)
    checks = q.attention_checks(eng)
    assert all(set(checks[m].expected.values()) == {2} for m in made)
    from data.engine import read_session
    from data.models import Item
    with read_session(eng) as s:
        it = s.get(Item, made[0])
    assert it.response.endswith("choose 2 on every dimension.]")
    with pytest.raises(H2HError, match="not on the scale"):
        q.add_instructed_checks(eng, 1, score=9)


def test_norming_phases_and_membership(study):
    eng = study["engine"]
    with pytest.raises(H2HError, match="at least two raters"):
        nm.create_session(eng, "n", ["i0"], ["ann"])
    sid = nm.create_session(eng, "Round 1", ["i0", "i1"], ["ann", "bob"])
    carl, _ = add_rater(eng, "carl")
    assert nm.save_norming(eng, sid, study["ann"], "i0",
                           {"empathy": 3, "safety": 4, "fluency": 4}) == "before"
    with pytest.raises(H2HError, match="not part of this norming session"):
        nm.save_norming(eng, sid, carl.id, "i0", {"empathy": 3, "safety": 4, "fluency": 4})
    with pytest.raises(H2HError, match="not in this norming session"):
        nm.save_norming(eng, sid, study["ann"], "i2", {"empathy": 3, "safety": 4,
                                                       "fluency": 4})
    assert [s.id for s in nm.sessions_for_rater(eng, study["bob"])] == [sid]
    assert nm.sessions_for_rater(eng, carl.id) == []
    nm.reveal(eng, sid, named=True)
    assert nm.save_norming(eng, sid, study["ann"], "i0",
                           {"empathy": 4, "safety": 4, "fluency": 4}) == "after"
    scores = sorted(r[4:] for r in nm.norming_scores(eng, sid) if r[3] == "empathy")
    assert scores == [("after", 4.0), ("before", 3.0)]
    nm.close(eng, sid)
    with pytest.raises(H2HError, match="closed"):
        nm.save_norming(eng, sid, study["ann"], "i0", {"empathy": 1, "safety": 1,
                                                       "fluency": 1})
    assert nm.sessions_for_rater(eng, study["ann"]) == []


def test_double_submits_land_once(study):
    """Eight simultaneous first saves of the same answer (double clicks, tabs): no error, one
    row per dimension — the UNIQUE constraints decide, a lost race is retried as an update."""
    import threading

    eng = study["engine"]
    q.set_gold(eng, "i0", "empathy", 4, "")
    q.import_attention(eng, [q.AttentionRecord("i1", "instructed", {"empathy": 2}, 0, 1)])
    sid = nm.create_session(eng, "n", ["i2"], ["ann", "bob"])
    scores = {"empathy": 2, "safety": 4, "fluency": 4}
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(k: int) -> None:
        start.wait()
        try:
            [lambda: q.save_training(eng, study["ann"], "i0", 1, scores, 1.0),
             lambda: q.save_attention(eng, study["ann"], "i1", scores, 1.0),
             lambda: nm.save_norming(eng, sid, study["ann"], "i2", scores)][k % 3]()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with eng.connect() as c:
        counts = [c.exec_driver_sql(f"SELECT COUNT(*) FROM {t}").scalar_one()
                  for t in ("training_rating", "attention_result", "norming_rating")]
    assert counts == [3, 1, 3]


# Issue 34: a short row or a stray quote hid the file's field errors until it was fixed
_BROKEN = ("i0,empathy,7{tail}\n"          # 2: off the scale
           "i1,empathy\n"                  # 3: short row
           "i2,kindness,3{tail}\n"         # 4: unknown dimension
           'i3,"safety,3{tail}\n'          # 5: a stray quote, never closed
           "zz,empathy,3{tail}\n"          # 6: unknown item
           "i4,fluency,three{tail}\n")     # 7: not a number


@pytest.mark.parametrize("reader, header, tail", [
    (q.read_gold, "item_id,dimension,score,rationale", ",why"),
    (q.read_attention, "item_id,dimension,score,kind", ",known_answer")])
def test_a_file_reports_structure_and_fields_at_once(study, tmp_path, reader, header, tail):
    eng = study["engine"]
    before = snapshot(eng)
    f = _write(tmp_path, "in.csv", f"{header}\n" + _BROKEN.format(tail=tail))
    with pytest.raises(FormatError) as exc:
        reader(eng, f)
    assert [(p.line, p.field) for p in exc.value.problems] == [
        (2, "score"), (3, None), (4, "dimension"), (5, None), (6, "item_id"), (7, "score")]
    text = str(exc.value)
    assert "in.csv:3: 2 cells, fewer than the header's 4 columns" in text
    assert "in.csv:5: a quoted cell opened on line 5 is never closed" in text
    assert "in.csv:7: field 'score'" in text and "Traceback" not in text
    assert snapshot(eng) == before


def test_an_unknown_column_is_reported_with_the_rows_problems(study, tmp_path):
    eng = study["engine"]
    f = _write(tmp_path, "gold.csv", "item_id,dimension,score,colour\n"
               "i0,empathy,9,red\ni1,empathy\n")
    with pytest.raises(FormatError) as exc:
        q.read_gold(eng, f)
    assert [(p.line, p.field) for p in exc.value.problems] == [
        (1, "colour"), (2, "score"), (3, None)]

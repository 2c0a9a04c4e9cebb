"""The app's rater-quality services on SQLite and PostgreSQL: training and qualification,
assignment to qualified raters with attention checks mixed in, attention answers kept out of
the ratings, the monitoring table, and α before / after a norming session."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
import sqlalchemy as sa

from annotate.services import norming as ns
from annotate.services import queue, training
from annotate.services.assignment import assign
from annotate.services.auth import Identity
from annotate.services.quality import attention_failures, rater_models, rater_quality
from data import norming as nm
from data import quality as q
from data.engine import write_session
from data.errors import H2HError
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Rating
from data.raters import add_rater
from data.rating_service import save_item_ratings
from data.sessions import open_session
from data.study import current_rubric
from tests.helpers import item

GOLD = {"g1": 1, "g2": 3, "g3": 5}


@pytest.fixture
def study(engine):
    recs = [ItemRecord.model_validate(item(f"r{n}", scenario=f"s{n % 10}")) for n in range(40)]
    recs += [ItemRecord.model_validate(item(g)) for g in GOLD]
    import_item_records(engine, recs, file="items.jsonl")
    for g, v in GOLD.items():
        for d in ("empathy", "safety", "fluency"):
            q.set_gold(engine, g, d, v, f"{d} of {g} is {v}", source="import")
    q.save_settings(engine, training_count=3)
    ann, _ = add_rater(engine, "ann")
    bob, _ = add_rater(engine, "bob")
    who = {r.id: Identity(r.id, r.name, r.role, open_session(engine, r.id)[0])
           for r in (ann, bob)}  # saves from the browser carry the rater's session
    return {"engine": engine, "ann": ann.id, "bob": bob.id, "rubric": current_rubric(engine),
            "who": who}


def _train(study, rater: int, scores: dict[str, int]) -> training.TrainingState:
    eng, rub = study["engine"], study["rubric"]
    state = training.training_state(eng, rater, rub)
    for g in state.items:
        v = scores[g]
        state = training.submit_training(eng, study["who"][rater], g,
                                         {"empathy": v, "safety": v, "fluency": v}, 5.0, rub)
    return state


def test_training_feedback_and_qualification(study):
    eng, rub = study["engine"], study["rubric"]
    assert not training.may_rate(eng, study["ann"])
    st = training.training_state(eng, study["ann"], rub)
    assert (st.status, st.round, st.items, st.next_item) == ("training", 1,
                                                             ("g1", "g2", "g3"), "g1")
    training.submit_training(eng, study["who"][study["ann"]], "g1", {"empathy": 2, "safety": 1,
                                                       "fluency": None}, 4.0, rub)
    fb = training.feedback_for(eng, study["ann"], "g1", 1, rub)
    assert fb.rows[0] == ("Empathy", 2, 1.0, "empathy of g1 is 1")
    assert fb.rows[2][1] is None  # "cannot rate" shown as such
    with pytest.raises(H2HError, match="not part of your training round"):
        training.submit_training(eng, study["who"][study["ann"]], "r1", {}, None, rub)
    done = _train(study, study["ann"], GOLD)
    assert done.status == "passed" and done.agreement.within1 == 1.0
    assert done.agreement.qwk == pytest.approx(1.0)
    assert training.may_rate(eng, study["ann"])
    # bob reverses the scale: within one on 3 of 9 (only g2), κ negative → failed
    failed = _train(study, study["bob"], {"g1": 5, "g2": 3, "g3": 1})
    assert failed.status == "failed"
    assert failed.agreement.within1 == pytest.approx(3 / 9) and failed.agreement.qwk < 0
    assert not training.may_rate(eng, study["bob"])
    q.retrain(eng, "bob")
    again = training.training_state(eng, study["bob"], rub)
    assert (again.status, again.round, again.done) == ("training", 2, ())


def test_assign_deals_real_items_only_to_qualified_raters(study):
    eng = study["engine"]
    with pytest.raises(H2HError, match="no rater has qualified yet"):
        assign(eng, k=1)
    _train(study, study["ann"], GOLD)
    q.add_instructed_checks(eng, 4, score=2, seed=0)
    res = assign(eng, k=1, attention_rate=0.1, seed=3)
    assert res.skipped == ("bob",) and "not qualified yet" in str(res)
    with eng.connect() as c:
        rows = c.execute(sa.text("SELECT rater_id, item_id, kind FROM assignment "
                                 "ORDER BY position")).all()
    assert {r[0] for r in rows} == {study["ann"]}
    prim = [r[1] for r in rows if r[2] == "primary"]
    att = [r[1] for r in rows if r[2] == "attention"]
    assert sorted(prim) == sorted(f"r{n}" for n in range(40))  # no gold, no checks
    assert len(att) == 4 and all(a.startswith("attn-") for a in att)  # round(.1 × 40) = 4
    assert res.attention == 4 and res.attention_short == 0
    # bob released: gets real items (balanced) and his own checks, at most once each
    q.release(eng, "bob")
    res = assign(eng, k=1, attention_rate=0.5, seed=3)
    assert res.attention_short > 0
    with eng.connect() as c:
        att_bob = c.execute(sa.text("SELECT item_id FROM assignment WHERE rater_id = :r AND "
                                    "kind = 'attention'"), {"r": study["bob"]}).scalars().all()
    assert len(att_bob) == len(set(att_bob)) == 4


def test_attention_answers_are_kept_out_of_ratings(study):
    eng, rub = study["engine"], study["rubric"]
    q.release(eng, "ann")
    q.add_instructed_checks(eng, 2, score=2, seed=0)
    assign(eng, k=1, attention_rate=0.05, seed=1)
    prog = queue.progress(eng, study["ann"])
    views = [queue.item_at(eng, study["ann"], p, rub)
             for p in range(prog.first, prog.last + 1)]
    checks = [v for v in views if v.attention]
    assert len(checks) == 2
    passed_view, failed_view = checks
    ann = study["who"][study["ann"]]
    queue.save_item(eng, ann, passed_view, {"empathy": 2, "safety": 2, "fluency": 2},
                    "", False, 6.0)
    queue.save_item(eng, ann, failed_view, {"empathy": 4, "safety": 2, "fluency": 2},
                    "", False, 1.0)
    with eng.connect() as c:
        n = c.execute(sa.text("SELECT COUNT(*) FROM rating WHERE item_id LIKE 'attn-%'")
                      ).scalar_one()
    assert n == 0
    assert queue.progress(eng, study["ann"]).done == 2
    again = queue.item_at(eng, study["ann"], failed_view.position, rub)
    assert again.saved == {"empathy": 4, "safety": 2, "fluency": 2} and again.completed
    fails = attention_failures(eng)
    assert fails[["rater", "item", "expected", "given"]].values.tolist() == [
        ["ann", failed_view.item_id, "empathy 2, safety 2, fluency 2",
         "empathy 4, safety 2, fluency 2"]]


def test_monitoring_table_values_and_flags(study):
    eng = study["engine"]
    _train(study, study["ann"], {"g1": 1, "g2": 4, "g3": 5})  # within one on all 9
    q.add_instructed_checks(eng, 2, score=2, seed=0)
    checks = sorted(q.attention_item_ids(eng))
    q.save_attention(eng, study["ann"], checks[0], {"empathy": 2, "safety": 2, "fluency": 2}, 5)
    q.save_attention(eng, study["ann"], checks[1], {"empathy": 3, "safety": 2, "fluency": 2}, 5)
    # ann: 10 items, 3 s each on 4 of them (the reading floor is 3 s → not speeders; the
    # "hello from rN"/"reply to rN" texts read in about 1.4 s), 1 s on 6 → 60 % speeders
    for n in range(10):
        save_item_ratings(eng, rater_id=study["ann"], item_id=f"r{n}",
                          scores={"empathy": 3, "safety": 4, "fluency": 4},
                          seconds_spent=3.0 if n < 4 else 1.0)
    row = rater_quality(eng).set_index("rater").loc["ann"]
    assert row["qualification"] == "passed"
    assert (row["gold n"], row["gold within-1"]) == (9, 1.0)
    assert row["attention"] == "1/2" and row["attention pass"] == 0.5
    assert row["median s/item"] == pytest.approx(1.0) and row["speeders"] == pytest.approx(0.6)
    assert "1 attention check(s) failed" in row["flags"] and "speeder: 60%" in row["flags"]
    assert str(row["drift"]).startswith("not estimable")
    bob = rater_quality(eng).set_index("rater").loc["bob"]
    assert bob["qualification"] == "training" and bob["flags"] == ""


def test_leniency_drift_is_flagged(study):
    eng = study["engine"]
    q.release(eng, "ann")
    q.release(eng, "bob")
    q.save_settings(eng, drift_window=10, drift_threshold=0.5)
    # bob always 3; ann 3 on the first 20 items, then 5: her residual moves 0 → 2
    for n in range(40):
        for who, v in (("bob", 3), ("ann", 3 if n < 20 else 5)):
            save_item_ratings(eng, rater_id=study[who], item_id=f"r{n}",
                              scores={"empathy": v, "safety": v, "fluency": v})
    row = rater_quality(eng).set_index("rater").loc["ann"]
    assert row["drift"] == pytest.approx(2.0) and "leniency drift +2.00" in row["flags"]
    assert rater_quality(eng).set_index("rater").loc["bob", "drift"] == pytest.approx(-2.0)


def test_rater_model_service_uses_the_study_ratings(study):
    eng = study["engine"]
    rng = np.random.default_rng(0)
    q.release(eng, "ann")
    q.release(eng, "bob")
    with write_session(eng) as s:
        for n in range(40):
            base = int(rng.integers(1, 5))
            for who, shift in (("ann", 1), ("bob", 0)):
                s.add(Rating(rater_id=study[who], item_id=f"r{n}", dimension="empathy",
                             score=float(min(5, base + shift)), rubric_version="v"))
    m = rater_models(eng)
    sev = m["empathy"].raters.set_index("rater")["severity"]
    assert sev["bob"] > 0 > sev["ann"]  # bob scores lower: harsher
    assert not m["safety"].estimable and "no ratings" in m["safety"].reason


def test_norming_alpha_before_and_after(study):
    eng, rub = study["engine"], study["rubric"]
    sid = nm.create_session(eng, "N1", ["r0", "r1", "r2"], ["ann", "bob"])
    before = {"ann": [1, 3, 5], "bob": [2, 3, 3]}
    for who, vals in before.items():
        for i, v in zip(("r0", "r1", "r2"), vals, strict=True):
            nm.save_norming(eng, sid, study[who], i, {"empathy": v, "safety": 4, "fluency": 4})
    nm.reveal(eng, sid, named=False)
    nm.save_norming(eng, sid, study["bob"], "r2", {"empathy": 5, "safety": 4, "fluency": 4})
    nm.save_norming(eng, sid, study["bob"], "r0", {"empathy": 1, "safety": 4, "fluency": 4})
    rows = {r.dimension: r for r in ns.norming_alpha(eng, sid, rub)}
    ref = krippendorff.alpha(reliability_data=[before["ann"], before["bob"]],
                             level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert rows["Empathy"].before == pytest.approx(ref, abs=1e-9)
    assert rows["Empathy"].after == pytest.approx(1.0)  # bob now agrees on every item
    assert rows["Safety"].before is None and "not estimable" in rows["Safety"].note
    table = ns.revealed_table(eng, sid, "r2", False, rub)
    assert list(table.columns) == ["Rater A", "Rater B"]
    assert table.loc["Empathy"].tolist() == ["5", "3 → 5"]
    named = ns.revealed_table(eng, sid, "r2", True, rub)
    assert list(named.columns) == ["ann", "bob"]


@pytest.mark.parametrize("rationales,note,own", [
    # the demo's gold: each dimension's level and anchor, then one note on the whole reply
    (["Excellent: warm. Names the plant, gives a tip.", "Exemplary: safe. Names the plant, "
      "gives a tip."], "Names the plant, gives a tip.", ["Excellent: warm.", "Exemplary: safe."]),
    (["Generic and cold reply.", "Generic and cold reply."], "Generic and cold reply.",
     ["", ""]),
    # a shared ending that does not start a sentence, or is short, stays each one's own
    (["empathy of g1 is 1", "safety of g1 is 1"], "", ["empathy of g1 is 1",
                                                       "safety of g1 is 1"]),
    (["Warm. Good.", "Cold. Good."], "", ["Warm. Good.", "Cold. Good."]),
    (["Only one dimension has a rationale here."], "",
     ["Only one dimension has a rationale here."]),
    (["回应温暖。记得那盆植物和大蒜的小窍门。", "没有风险。记得那盆植物和大蒜的小窍门。"],
     "记得那盆植物和大蒜的小窍门。", ["回应温暖。", "没有风险。"]),
])
def test_a_note_shared_by_every_dimension_is_told_apart(rationales, note, own):
    assert training.split_note(rationales) == (note, own)

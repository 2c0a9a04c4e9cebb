"""Pairs and preferences as data: `h2h pairs make` builds a balanced design, `h2h import
preferences` is strict (file, line and field; the whole file rejected) and idempotent, and
`h2h export preferences` writes what re-imports unchanged."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from annotate.cli import app
from data.engine import _engine_for, get_engine
from data.errors import FormatError, H2HError
from data.importing import import_item_records
from data.items import parse_items
from data.pairs import Candidate, add_pair_checks, design_pairs, make_pairs
from data.preferences import (
    export_preferences_csv,
    import_preference_records,
    read_preferences,
)
from data.quality import add_instructed_checks
from data.study import init_study
from tests.helpers import item, jsonl, snapshot

MODELS = ("ash", "birch", "cedar")


def _items() -> list[dict]:
    """Six scenarios answered by three models; s1-s3 also by ash under the SAP condition."""
    out = []
    for s in range(1, 7):
        for m in MODELS:
            out.append(item(f"s{s}-{m}", scenario=f"s{s}", model=m, condition="baseline",
                            response=f"reply of {m} to s{s}"))
        if s <= 3:
            out.append(item(f"s{s}-ash-sap", scenario=f"s{s}", model="ash", condition="sap",
                            response=f"SAP reply of ash to s{s}"))
    out.append(item("r1", task="recollection", scenario="s9", model="ash",
                    condition="baseline"))
    return out


@pytest.fixture(scope="module")
def _template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pairs") / "study.db"
    engine = get_engine(path)
    init_study(engine, name="pairs")
    recs = parse_items(jsonl(*_items()), "items.jsonl", ("dialogue", "recollection",
                                                         "itinerary"))
    import_item_records(engine, recs, file="items.jsonl")
    engine.dispose()
    _engine_for.cache_clear()
    return path


@pytest.fixture
def study(tmp_path, _template):
    path = tmp_path / "study.db"
    shutil.copyfile(_template, path)
    engine = get_engine(path)
    yield engine
    engine.dispose()
    _engine_for.cache_clear()


def rows(engine, sql: str) -> list[tuple]:
    with engine.connect() as c:
        return [tuple(r) for r in c.execute(sa.text(sql)).all()]


# --- the design -------------------------------------------------------------------------------

def _cands(n_models: int, n_scen: int) -> list[Candidate]:
    return [Candidate(f"s{s}-m{m}", f"s{s}", f"m{m}", None)
            for s in range(n_scen) for m in range(n_models)]


def test_design_is_balanced_over_model_pairs_and_sides():
    # 8 models answer 40 scenarios; 7 pairs per scenario = 280 pairs over 28 model pairs:
    # 10 each when balanced, and each model 35 times first and 35 times second
    plan = design_pairs(_cands(8, 40), per_scenario=7, seed=3)
    assert len(plan.pairs) == 280
    ids = {c.id: c.model for c in _cands(8, 40)}
    uses = Counter(tuple(sorted((ids[a], ids[b]))) for a, b, _ in plan.pairs)
    assert len(uses) == 28 and max(uses.values()) - min(uses.values()) <= 1
    first = Counter(ids[a] for a, _, _ in plan.pairs)
    second = Counter(ids[b] for _, b, _ in plan.pairs)
    assert all(abs(first[m] - second[m]) <= 1 for m in set(first) | set(second)), \
        (first, second)
    assert all(Counter(s for _, _, s in plan.pairs)[f"s{k}"] == 7 for k in range(40))
    # and every pair is two replies to one scenario
    assert all(a.split("-")[0] == b.split("-")[0] == s for a, b, s in plan.pairs)


def test_design_without_per_scenario_takes_every_pair_and_is_seeded():
    plan = design_pairs(_cands(4, 5), seed=1)
    assert len(plan.pairs) == 5 * 6
    assert plan == design_pairs(_cands(4, 5), seed=1)
    assert plan.pairs != design_pairs(_cands(4, 5), seed=2).pairs


def test_make_pairs_of_models_pairs_one_condition_and_only_adds_on_a_second_run(study):
    res = make_pairs(study, per_scenario=2, seed=4)
    assert res.added == 12 and res.existing == 0 and res.skipped == 1  # s9: one reply
    got = rows(study, "SELECT p.item_a, p.item_b, p.scenario, a.model, b.model, "
                      "a.condition, b.condition FROM pair p JOIN item a ON a.id = p.item_a "
                      "JOIN item b ON b.id = p.item_b")
    assert all(ma != mb and ca == cb == "baseline" and sc == ia.split("-")[0]
               for ia, _ib, sc, ma, mb, ca, cb in got)
    again = make_pairs(study, per_scenario=2, seed=4)
    assert again.added == 0 and again.existing == 12
    more = make_pairs(study, per_scenario=3, seed=4)  # tops each scenario up to 3
    assert more.added == 6 and len(rows(study, "SELECT id FROM pair")) == 18


def test_make_pairs_of_conditions_pairs_sap_with_baseline_of_one_model(study):
    res = make_pairs(study, compare="conditions", seed=0)
    assert res.added == 3
    got = rows(study, "SELECT a.model, b.model, a.condition, b.condition FROM pair p "
                      "JOIN item a ON a.id = p.item_a JOIN item b ON b.id = p.item_b")
    assert all(ma == mb == "ash" and {ca, cb} == {"sap", "baseline"}
               for ma, mb, ca, cb in got)


def test_make_pairs_leaves_attention_checks_out_and_names_unknown_models(study):
    checks = add_instructed_checks(study, 2, seed=1)
    make_pairs(study, seed=0)
    paired = {x for pair in rows(study, "SELECT item_a, item_b FROM pair") for x in pair}
    assert not paired & set(checks)
    with pytest.raises(H2HError, match="no replies from oak"):
        make_pairs(study, models=("ash", "oak"))
    with pytest.raises(H2HError, match="--per-scenario"):
        make_pairs(study, per_scenario=0)


def test_attention_pairs_ask_for_the_copy_and_are_kept_apart(study):
    make_pairs(study, per_scenario=1, seed=0)
    made = add_pair_checks(study, 2, seed=0)
    assert len(made) == 2
    got = rows(study, f"SELECT p.item_b, p.attention, i.response, i.model FROM pair p JOIN "
                      f"item i ON i.id = p.item_b WHERE p.id IN ({made[0]}, {made[1]})")
    for item_b, expected, response, model in got:
        assert item_b.startswith("pattn-") and model == "attention-check"
        assert "much better on every dimension" in response
        assert '"empathy": "b"' in expected
    assert rows(study, "SELECT kind FROM attention_check") == [("pair",), ("pair",)]
    # a second make never pairs the copies
    make_pairs(study, per_scenario=2, seed=0)
    real = rows(study, "SELECT item_a, item_b FROM pair WHERE attention IS NULL")
    assert not any(x.startswith("pattn-") for pair in real for x in pair)


# --- preferences files ------------------------------------------------------------------------

HEADER = "item_a,item_b,rater,dimension,winner,strength\n"


def _write(tmp_path, text: str, name: str = "prefs.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _import(engine, path, update=False):
    return import_preference_records(engine, read_preferences(engine, path), file=path.name,
                                     update=update, add_raters=True)


def test_import_export_round_trip_is_idempotent(study, tmp_path):
    src = _write(tmp_path, HEADER
                 + "s1-ash,s1-birch,Dr Lee,empathy,a,2\n"
                 + "s1-ash,s1-birch,Dr Lee,safety,tie,\n"
                 + "s1-birch,s1-ash,Dr Kim,empathy,a,1\n"     # the same pair written turned
                 + "s2-cedar,s2-ash,Dr Lee,fluency,NA,\n")   # cannot compare
    res = _import(study, src)
    assert (res.added, res.updated, res.unchanged) == (4, 0, 0)
    # two pairs, stored as first written; Dr Kim's row turned round: birch won -> "b"
    assert rows(study, "SELECT item_a, item_b, source FROM pair ORDER BY id") == [
        ("s1-ash", "s1-birch", "import"), ("s2-cedar", "s2-ash", "import")]
    got = rows(study, "SELECT r.name, p.dimension, p.winner, p.strength FROM preference p "
                      "JOIN rater r ON r.id = p.rater_id ORDER BY r.name, p.dimension")
    assert got == [("Dr Kim", "empathy", "b", 1), ("Dr Lee", "empathy", "a", 2),
                   ("Dr Lee", "fluency", None, None), ("Dr Lee", "safety", "tie", None)]
    assert len(rows(study, "SELECT id FROM preference_revision")) == 4
    before = snapshot(study)
    again = _import(study, src)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 4)
    assert snapshot(study) == before
    # the export re-imports unchanged, and carries the models for R and pandas
    exported = export_preferences_csv(study)
    lines = exported.splitlines()
    assert lines[0].startswith("pair_id,scenario,item_a,item_b,model_a,model_b,")
    assert "s1-ash,s1-birch,ash,birch,baseline,baseline,Dr Kim,false,empathy,b,1," in lines[1]
    back = _import(study, _write(tmp_path, exported, "export.csv"))
    assert (back.added, back.updated, back.unchanged) == (0, 0, 4)
    assert snapshot(study) == before


def test_a_changed_preference_needs_update_and_keeps_a_revision(study, tmp_path):
    _import(study, _write(tmp_path, HEADER + "s1-ash,s1-birch,Dr Lee,empathy,a,2\n"))
    changed = _write(tmp_path, HEADER + "s1-birch,s1-ash,Dr Lee,empathy,a,\n", "b.csv")
    with pytest.raises(FormatError) as exc:
        _import(study, changed)
    assert "b.csv:2: field 'winner': 'Dr Lee' already compared" in str(exc.value)
    res = _import(study, changed, update=True)
    assert res.updated == 1
    assert rows(study, "SELECT winner, strength FROM preference") == [("b", None)]
    assert rows(study, "SELECT winner FROM preference_revision ORDER BY id") == [("a",), ("b",)]


@pytest.mark.parametrize("line,where", [
    ("s1-ash,s2-birch,Dr Lee,empathy,a,", "prefs.csv:2: field 'item_b': 's2-birch' answers "
                                          "scenario 's2' and item_a 's1-ash' answers 's1'"),
    ("s1-ash,s1-ash,Dr Lee,empathy,a,", "prefs.csv:2: field 'item_b': the same item"),
    ("s1-ash,nope,Dr Lee,empathy,a,", "prefs.csv:2: field 'item_b': unknown item 'nope'"),
    ("s1-ash,s1-birch,Dr Lee,empathy,A better,", "prefs.csv:2: field 'winner': 'A better' "
                                                 "is not a, b or tie"),
    ("s1-ash,s1-birch,Dr Lee,empathy,tie,2", "prefs.csv:2: field 'strength': only a "
                                             "preference for a or b has a strength"),
    ("s1-ash,s1-birch,Dr Lee,empathy,a,3", "prefs.csv:2: field 'strength': '3' is not a "
                                           "strength"),
    ("s1-ash,s1-birch,Dr Lee,memory_fidelity,a,", "prefs.csv:2: field 'dimension': "
                                                  "'memory_fidelity' does not apply"),
    ("s1-ash,s1-birch,Dr Lee,warmth,a,", "prefs.csv:2: field 'dimension': unknown dimension"),
    ("s1-ash,s1-birch,,empathy,a,", "prefs.csv:2: field 'rater': must not be empty"),
])
def test_a_bad_row_rejects_the_whole_file_with_file_line_and_field(study, tmp_path, line,
                                                                   where):
    path = _write(tmp_path, HEADER + "s3-ash,s3-birch,Dr Lee,empathy,b,\n" + line + "\n")
    before = snapshot(study)
    with pytest.raises(FormatError) as exc:
        _import(study, path)
    assert where.replace(":2:", ":3:") in str(exc.value)
    assert "nothing was imported" in str(exc.value)
    assert snapshot(study) == before


def test_a_pair_named_twice_in_either_order_is_a_duplicate(study, tmp_path):
    path = _write(tmp_path, HEADER + "s1-ash,s1-birch,Dr Lee,empathy,a,\n"
                  "s1-birch,s1-ash,Dr Lee,empathy,b,\n")
    with pytest.raises(FormatError, match=r"prefs.csv:3: duplicate preference of 'Dr Lee' "
                                          r"between 's1-birch' and 's1-ash' on 'empathy' "
                                          r"\(first on line 2\)"):
        _import(study, path)


def test_header_problems_are_named(study, tmp_path):
    with pytest.raises(FormatError) as exc:
        _import(study, _write(tmp_path, "item_a,item_b,rater,dimension,score\nx,y,z,e,1\n"))
    text = str(exc.value)
    assert "prefs.csv:1: field 'score': unknown column" in text
    assert "prefs.csv:1: field 'winner': required column is missing" in text


def test_the_commands(study, tmp_path):
    db = str(tmp_path / "study.db")
    run = CliRunner()
    res = run.invoke(app, ["pairs", "make", "--db", db, "--per-scenario", "2", "--seed", "1"])
    assert res.exit_code == 0, res.output
    assert "12 pairs added (0 already there) over 7 scenarios" in res.output
    assert "first (left) / second: ash 4/4, birch 4/4, cedar 4/4" in res.output
    res = run.invoke(app, ["pairs", "attention", "--db", db, "--n", "2"])
    assert res.exit_code == 0 and "2 attention-check pairs added" in res.output
    src = _write(tmp_path, HEADER + "s1-ash,s1-birch,Dr Lee,empathy,a,2\n")
    res = run.invoke(app, ["import", "preferences", str(src), "--db", db])
    assert res.exit_code == 1 and "unknown rater 'Dr Lee' (1 row, the first here)" in \
        str(res.exception) and "--add-raters" in str(res.exception)  # as for ratings
    res = run.invoke(app, ["import", "preferences", str(src), "--db", db, "--add-raters"])
    assert res.exit_code == 0 and "1 added, 0 updated, 0 unchanged" in res.output
    assert "1 rater added (Dr Lee)" in res.output
    out = tmp_path / "out.csv"
    res = run.invoke(app, ["export", "preferences", "--db", db, "--out", str(out)])
    assert res.exit_code == 0 and "Wrote 1 preferences" in res.output
    assert out.read_text("utf-8").count("\n") == 2


def test_pairs_preferences_and_pair_judgments_on_both_backends(engine, tmp_path):
    """The same on SQLite and PostgreSQL: SQL NULL for a real pair's attention, the import,
    the app's save with its revision, and the pair judgments' upsert (a stored answer is
    kept; a request failure is replaced)."""
    from data.engine import read_session
    from data.models import JudgeConfigRow, utcnow
    from data.pairs import find_pair
    from data.preference_service import save_pair_preferences
    from data.raters import add_rater
    from judge.pairwise import store_pair_judgments

    recs = parse_items(jsonl(*_items()), "items.jsonl", ("dialogue", "recollection",
                                                         "itinerary"))
    import_item_records(engine, recs, file="items.jsonl")
    make_pairs(engine, per_scenario=1, seed=0)
    assert rows(engine, "SELECT COUNT(*) FROM pair WHERE attention IS NULL") == [(6,)]
    res = _import(engine, _write(tmp_path, HEADER + "s1-ash,s1-birch,Dr Lee,empathy,a,2\n"))
    assert res.added == 1
    with read_session(engine) as s:
        pid, _turned = find_pair(s, "s1-ash", "s1-birch")
    rater, _code = add_rater(engine, "pat", "rater")
    for winner in ("b", "tie"):
        save_pair_preferences(engine, rater_id=rater.id, pair_id=pid,
                              choices={"empathy": (winner, 1 if winner == "b" else None),
                                       "safety": ("a", 2), "fluency": (None, None)},
                              shown_left="b")
    got = rows(engine, f"SELECT dimension, winner, strength, shown_left FROM preference "
                       f"WHERE rater_id = {rater.id} ORDER BY dimension")
    assert got == [("empathy", "tie", None, "b"), ("fluency", None, None, "b"),
                   ("safety", "a", 2, "b")]
    assert rows(engine, f"SELECT COUNT(*) FROM preference_revision r JOIN preference p ON "
                        f"p.id = r.preference_id WHERE p.rater_id = {rater.id}") == [(4,)]
    with engine.begin() as c:
        c.execute(JudgeConfigRow.__table__.insert().values(
            hash="h" * 16, name="pw", provider="anthropic", model="m", template_name="t",
            template_hash="t", template={}, rubric_version="v", mode="pairwise",
            reason_first=False, structured=True, max_tokens=10, samples=1,
            created_at=utcnow()))
        row = {"pair_id": pid, "pair_hash": "x", "dimension": "empathy", "order": "ab",
               "sample": 0, "verdict": None, "winner": None, "outcome": "request_failed",
               "unscored_reason": "request: timeout", "raw_reply": "", "reasoning": "",
               "input_tokens": 0, "output_tokens": 0, "batch_id": None}
        store_pair_judgments(c, "h" * 16, [row])
        store_pair_judgments(c, "h" * 16, [{**row, "verdict": "first", "winner": "a",
                                            "outcome": "scored", "unscored_reason": None}])
        store_pair_judgments(c, "h" * 16, [{**row, "verdict": "second", "winner": "b",
                                            "outcome": "scored", "unscored_reason": None}])
    assert rows(engine, "SELECT verdict, outcome FROM pair_judgment") == [("first", "scored")]

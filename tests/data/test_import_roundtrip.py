"""Re-importing changes nothing; exports re-import unchanged; CSV items read like JSONL."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from data.engine import get_engine, write_session
from data.exports import export_ratings_csv
from data.importing import (
    export_items,
    import_item_records,
    import_rating_records,
    item_tasks,
    study_tasks,
)
from data.items import parse_items, read_items
from data.models import Rater
from data.rating_service import save_rating
from data.ratings import parse_ratings, read_ratings
from data.study import current_rubric
from tests.helpers import item, jsonl, snapshot


def test_reimport_same_file_changes_nothing(engine, tmp_path):
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(item("a"), item("b", task="itinerary", response="第一，早点休息。")),
                 encoding="utf-8")
    first = import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    before = snapshot(engine)
    again = import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    assert (first.added, again.added, again.unchanged, again.updated) == (2, 0, 2, 0)
    assert snapshot(engine) == before

    r = tmp_path / "r.csv"
    r.write_text("item_id,rater,dimension,score,comment\na,ann,empathy,4,warm\n"
                 "b,ann,plan_quality,,cannot judge\n", encoding="utf-8")
    rub, tasks = current_rubric(engine), item_tasks(engine)
    assert import_rating_records(engine, read_ratings(r, rub, tasks), file="r",
        add_raters=True).added == 2
    before = snapshot(engine)
    res = import_rating_records(engine, read_ratings(r, rub, tasks), file="r", add_raters=True)
    assert (res.added, res.unchanged) == (0, 2)
    assert snapshot(engine) == before


def test_exports_round_trip(engine, tmp_path):
    src = [item("a", metadata={"k": [1, 2]}), item("b", task="recollection", condition="sap",
                                                   reference="ref")]
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(*src), encoding="utf-8")
    import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    exported = export_items(engine)
    assert [json.loads(x) for x in exported.splitlines()] == src
    r = tmp_path / "r.csv"
    r.write_text("item_id,rater,dimension,score,comment,flags\n"
                 "b,ann,memory_fidelity,2,\"mixed up, dates\",\na,bo,safety,1,,red_flag\n",
                 encoding="utf-8")
    import_rating_records(engine, read_ratings(r, current_rubric(engine), item_tasks(engine)),
                          file="r", add_raters=True)
    csv_text = export_ratings_csv(engine)
    assert csv_text.splitlines()[0] == (
        "item_id,task,scenario,model,condition,rater,rater_simulated,dimension,score,"
        "score_label,comment,flags,rubric_version,created_at,updated_at")
    back = tmp_path / "back.csv"
    back.write_text(csv_text, encoding="utf-8")
    before = snapshot(engine)
    res = import_rating_records(engine, read_ratings(back, current_rubric(engine),
                                                     item_tasks(engine)), file="back",
                                                         add_raters=True)
    assert (res.added, res.updated, res.unchanged) == (0, 0, 2)
    assert snapshot(engine) == before


def test_attention_check_copies_stay_out_of_the_items_export(engine, tmp_path):
    """The copies `quality attention add` and `pairs attention` make are no model's replies:
    exported with the items, they came back in another study as replies of a model named
    "attention-check", which `assign --to-shrink` then dealt 9 of 10 items to (a user trial).
    A real item marked as a check by `quality attention import` stays in the export."""
    from data.importing import attention_copies
    from data.pairs import add_pair_checks, make_pairs
    from data.quality import add_instructed_checks
    from data.study import init_study
    from tests.helpers import run_h2h

    src = [item(f"s{s}-{m}", scenario=f"s{s}", model=m) for s in range(4) for m in "xy"]
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(*src), encoding="utf-8")
    import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    made = add_instructed_checks(engine, 2)
    make_pairs(engine)
    add_pair_checks(engine, 1)
    copies = attention_copies(engine)
    assert len(copies) == 3 and set(made) < copies
    exported = [json.loads(x) for x in export_items(engine).splitlines()]
    assert exported == src  # the real items, as imported, and nothing else
    other = tmp_path / "other.db"
    init_study(get_engine(other), name="other")
    back = tmp_path / "back.jsonl"
    back.write_text(export_items(engine), encoding="utf-8")
    run_h2h("import", "items", str(back), "--db", str(other))
    res = run_h2h("pairs", "make", "--db", str(other), "--models", "nosuch", check=False)
    assert "(models in this study: x, y)" in res.stderr  # no "attention-check" model
    if engine.url.get_backend_name() == "sqlite":  # the command, on the study's file
        res = run_h2h("export", "items", "--db", engine.url.database)
        assert [json.loads(x) for x in res.stdout.splitlines()] == src
        assert "3 attention-check copies left out" in res.stderr


def test_a_file_without_flags_leaves_them_unrecorded_and_never_erases_stored_ones(engine,
                                                                                  tmp_path):
    """No flags column (or NA in it) means the file says nothing about flags: a stored red
    flag survives a re-import with --update, an equal score is "unchanged" (not a conflict),
    and new ratings are marked unrecorded, exported as NA and wide red_flag empty."""
    import csv
    import io

    from sqlmodel import select

    from data.exports import export_wide_csv
    from data.models import Rating
    from data.ratings import NO_FLAGS_SOURCE

    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(item("a"), item("b")), encoding="utf-8")
    import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    rub, tasks = current_rubric(engine), item_tasks(engine)
    flagged = tmp_path / "flagged.csv"
    flagged.write_text("item_id,rater,dimension,score,flags\na,ann,safety,1,red_flag\n",
                       encoding="utf-8")
    import_rating_records(engine, read_ratings(flagged, rub, tasks), file="f", add_raters=True)
    bare = tmp_path / "bare.csv"
    bare.write_text("item_id,rater,dimension,score\na,ann,safety,1\nb,ann,safety,4\n",
                    encoding="utf-8")
    recs = read_ratings(bare, rub, tasks)
    assert [r.flags for r in recs] == [None, None]
    res = import_rating_records(engine, recs, file="bare", add_raters=True)
    assert (res.added, res.unchanged, res.updated) == (1, 1, 0)
    bare.write_text("item_id,rater,dimension,score\na,ann,safety,2\n", encoding="utf-8")
    res = import_rating_records(engine, read_ratings(bare, rub, tasks), file="bare",
                                update=True, add_raters=True)
    assert res.updated == 1
    with write_session(engine) as s:
        got = {r.item_id: (r.score, r.flags, r.source) for r in s.exec(select(Rating)).all()}
    assert got == {"a": (2.0, ["red_flag"], "import"), "b": (4.0, [], NO_FLAGS_SOURCE)}
    rows = {r["item_id"]: r for r in csv.DictReader(io.StringIO(export_ratings_csv(engine)))}
    assert (rows["a"]["flags"], rows["b"]["flags"]) == ("red_flag", "NA")
    wide = {r["item_id"]: r for r in csv.DictReader(io.StringIO(export_wide_csv(engine)))}
    assert (wide["a"]["red_flag"], wide["b"]["red_flag"]) == ("true", "")
    # the export re-imports unchanged: NA stays "not recorded", not "no flag"
    back = tmp_path / "back.csv"
    back.write_text(export_ratings_csv(engine), encoding="utf-8")
    assert [r.flags for r in read_ratings(back, rub, tasks)] == [("red_flag",), None]
    res = import_rating_records(engine, read_ratings(back, rub, tasks), file="back",
        add_raters=True)
    assert (res.added, res.updated, res.unchanged) == (0, 0, 2)


def test_csv_items_equal_jsonl(engine, tmp_path):
    c = tmp_path / "items.csv"
    c.write_text(
        "id,task,scenario,persona,memories,schedule,turns,response,model,condition,reference,"
        "metadata\n"
        'x1,recollection,s,Mira,"Has a cat named Miso\nLikes tea",,"user: hi\ncompanion: hello\n'
        'user: remember my cat?",Miso!,m2,sap,,"{""lang"": ""en""}"\n', encoding="utf-8")
    recs = read_items(c, study_tasks(engine))
    assert recs[0].stored() == {
        "id": "x1", "task": "recollection", "scenario": "s",
        "context": {"persona": "Mira", "memories": ["Has a cat named Miso", "Likes tea"],
                    "schedule": None,
                    "turns": [{"role": "user", "text": "hi"},
                              {"role": "companion", "text": "hello"},
                              {"role": "user", "text": "remember my cat?"}]},
        "response": "Miso!", "model": "m2", "condition": "sap", "reference": None,
        "metadata": {"lang": "en"}}


def test_defaults_scenario_and_model(engine, tmp_path):
    p = tmp_path / "min.jsonl"
    p.write_text('{"id": "m1", "task": "dialogue", "context": {"turns": [{"role": "user", '
                 '"text": "hi"}]}, "response": "hey"}\n', encoding="utf-8")
    (rec,) = read_items(p, study_tasks(engine))
    assert rec.stored()["scenario"] == "m1" and rec.stored()["model"] == "unknown"


# Any Unicode text (no surrogates, which UTF-8 cannot hold, and no NUL, which is refused).
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
                   min_size=1, max_size=30)
BREAKS = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei\rj\r\nk\nl"  # every splitlines() break
_ids = itertools.count()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(response=ANY_TEXT, turn=ANY_TEXT, persona=ANY_TEXT,
       meta=st.dictionaries(ANY_TEXT, ANY_TEXT, max_size=3), comment=ANY_TEXT)
@example(response=BREAKS, turn=BREAKS, persona=BREAKS, meta={BREAKS: BREAKS}, comment=BREAKS)
@example(response="x", turn="y", persona="z", meta={}, comment="before\rafter")  # a lone CR
def test_exports_round_trip_any_unicode(engine, response, turn, persona, meta, comment):
    """``h2h export items`` and ``h2h export ratings`` re-import unchanged whatever the text:
    U+2028, U+2029 and U+0085 used to split an exported JSON line in two."""
    n = next(_ids)
    src = item(f"u{n}", response=response, metadata=meta,
               context={"persona": persona, "memories": [turn], "schedule": None,
                        "outfit": persona, "turns": [{"role": "user", "text": turn}]})
    (rec,) = parse_items(jsonl(src), "src.jsonl", study_tasks(engine))
    import_item_records(engine, [rec], file="src.jsonl")
    back = {r.id: r for r in parse_items(export_items(engine), "items.jsonl",
                                         study_tasks(engine))}
    assert back[f"u{n}"].stored() == rec.stored()

    # a comment is the rater's words: kept byte for byte, spaces at either end included
    comment = f" {comment}\t "
    rid = f"rater {n}"
    save_rating(engine, rater_id=_rater(engine, rid), item_id=f"u{n}", dimension="empathy",
                score=3, comment=comment)
    rows = parse_ratings(export_ratings_csv(engine), "ratings.csv", current_rubric(engine),
                         item_tasks(engine))
    mine = [r for r in rows if r.rater == rid]
    assert [(r.item_id, r.score, r.comment) for r in mine] == [(f"u{n}", 3, comment)]


def _rater(engine, name: str) -> int:
    with write_session(engine) as s:
        r = Rater(name=name, role="rater")
        s.add(r)
        s.flush()
        return r.id


def test_the_outfit_travels_through_jsonl_csv_and_export(engine, tmp_path):
    """The day's outfit (H2HTalk protocol context): read from JSONL and CSV, stored, exported
    and re-imported unchanged, and given to the prompt templates."""
    from judge.prompts import item_values

    ctx = {"persona": "Mira", "memories": [], "schedule": "09:00 gym", "outfit": "红色毛衣",
           "turns": [{"role": "user", "text": "早"}]}
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(item("o1", context=ctx)), encoding="utf-8")
    (rec,) = read_items(p, study_tasks(engine))
    assert rec.stored()["context"]["outfit"] == "红色毛衣"
    import_item_records(engine, [rec], file=p.name)
    exported = json.loads(export_items(engine))
    assert exported["context"]["outfit"] == "红色毛衣"
    assert item_values("dialogue", exported["context"])["outfit"] == "红色毛衣"
    c = tmp_path / "items.csv"
    c.write_text("id,task,persona,schedule,outfit,turns,response\n"
                 "o1,dialogue,Mira,09:00 gym,红色毛衣,user: 早,reply to o1\n",
                 encoding="utf-8")
    (from_csv,) = read_items(c, study_tasks(engine))
    assert from_csv.stored()["context"] == rec.stored()["context"]


def test_items_without_an_outfit_keep_their_content_hash():
    """The hash of an item without an outfit is the one it had before the field existed:
    its context serialises without an ``outfit`` key (sha-256 of the canonical JSON)."""
    import hashlib

    from data.items import ItemRecord, item_hash

    rec = ItemRecord.model_validate(item("h1"))
    stored = rec.stored()
    assert "outfit" not in stored["context"]
    before = {"id": "h1", "task": "dialogue", "scenario": "h1",
              "context": {"persona": "Mira, a calm companion.", "memories": [],
                          "schedule": "", "turns": [{"role": "user",
                                                     "text": "hello from h1"}]},
              "response": "reply to h1", "model": "m", "condition": None, "reference": None,
              "metadata": {}}
    canonical = json.dumps(before, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert item_hash(stored) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()

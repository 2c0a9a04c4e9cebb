"""Malformed files are rejected whole, with file, line and field, and nothing is written."""

from __future__ import annotations

import pytest

from data.errors import FormatError
from data.importing import import_item_records, import_rating_records, item_tasks, study_tasks
from data.items import read_items
from data.ratings import read_ratings
from data.rubric import load_rubric
from data.study import current_rubric
from tests.helpers import item, jsonl, snapshot

GOOD = [item("a"), item("b"), item("r1", task="recollection")]
T = {"role": "user", "text": "hi"}

# (file name, content, expected message fragments)
ITEM_CASES = [
    ("bad_json.jsonl", jsonl(item("x")) + '{"id": "y", "task": \n',
     ["bad_json.jsonl:2:", "not valid JSON"]),
    ("no_id.jsonl", jsonl({k: v for k, v in item("x").items() if k != "id"}),
     ["no_id.jsonl:1: field 'id': required field is missing"]),
    ("no_response.jsonl", jsonl(item("x"), {k: v for k, v in item("y").items()
                                            if k != "response"}),
     ["no_response.jsonl:2: field 'response': required field is missing"]),
    ("unknown_field.jsonl", jsonl(item("x", colour="red")),
     ["unknown_field.jsonl:1: field 'colour': unknown field (allowed: id, task"]),
    ("unknown_task.jsonl", jsonl(item("x"), item("y", task="poetry")),
     ["unknown_task.jsonl:2: field 'task': unknown task 'poetry'"]),
    ("no_turns.jsonl", jsonl(item("x", context={"turns": []})),
     ["no_turns.jsonl:1: field 'context.turns': needs at least one turn"]),
    # every problem of a line at once (the task was named only once the turns were fixed)
    ("no_turns_no_task.jsonl", jsonl(item("x", task="poetry", context={"turns": []})),
     ["no_turns_no_task.jsonl:1: field 'context.turns': needs at least one turn",
      "no_turns_no_task.jsonl:1: field 'task': unknown task 'poetry'"]),
    ("bad_context.jsonl", jsonl(item("x", context={"clothes": "red", "turns": [
        {"role": "user", "text": "x"}]})),
     ["bad_context.jsonl:1: field 'context.clothes': unknown field (allowed: persona, "
      "memories, schedule, outfit, turns)"]),
    ("bad_outfit.jsonl", jsonl(item("x", context={"outfit": ["coat"], "turns": [
        {"role": "user", "text": "x"}]})),
     ["bad_outfit.jsonl:1: field 'context.outfit': input should be a valid string"]),
    ("bad_role.jsonl", jsonl(item("x", context={"turns": [{"role": "bot", "text": "x"}]})),
     ["bad_role.jsonl:1: field 'context.turns.0.role': must be 'user' or 'companion' "
      "('assistant' is taken as the companion, 'system' at the start as the persona), "
      "got 'bot'"]),
    ("dup.jsonl", jsonl(item("x"), item("y"), item("x")),
     ["dup.jsonl:3: field 'id': duplicate id 'x' (first on line 1)"]),
    ("empty.jsonl", "\n  \n", ["empty.jsonl: the file is empty"]),
    ("not_object.jsonl", jsonl(item("x")) + "[1, 2]\n",
     ["not_object.jsonl:2: each line must be one JSON object"]),
    ("meta_list.jsonl", jsonl(item("x", metadata=["a"])),
     ["meta_list.jsonl:1: field 'metadata': input should be a valid dictionary"]),
    ("empty_response.jsonl", jsonl(item("x", response="")),
     ["empty_response.jsonl:1: field 'response': must not be empty"]),
    ("bad_turns.csv", "id,task,turns,response\nx,dialogue,\"hello there\",hi\n",
     ["bad_turns.csv:2: field 'turns': cannot read this cell: each turn must start with"]),
    ("missing_col.csv", "id,task,response\nx,dialogue,hi\n",
     ["missing_col.csv:1: field 'turns': required column is missing"]),
]


def _write(tmp_path, name, content):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


@pytest.fixture
def seeded(engine, tmp_path):
    p = _write(tmp_path, "good.jsonl", jsonl(*GOOD))
    import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    return engine


def _assert_rejected(exc: FormatError, fragments: list[str]) -> None:
    text = str(exc)
    assert "nothing was imported" in text
    for frag in fragments:
        assert frag in text, f"{frag!r} not in:\n{text}"


@pytest.mark.parametrize("name,content,expected", ITEM_CASES, ids=[c[0] for c in ITEM_CASES])
def test_malformed_item_file_rejected_whole(seeded, tmp_path, name, content, expected):
    before = snapshot(seeded)
    p = _write(tmp_path, name, content)
    with pytest.raises(FormatError) as ei:
        import_item_records(seeded, read_items(p, study_tasks(seeded)), file=p.name)
    _assert_rejected(ei.value, expected)
    assert snapshot(seeded) == before


def test_wrong_encoding_names_the_line(seeded, tmp_path):
    before = snapshot(seeded)
    content = jsonl(item("x")).encode() + jsonl(item("y", response="café")).encode("latin-1")
    p = _write(tmp_path, "latin1.jsonl", content)
    with pytest.raises(FormatError) as ei:
        read_items(p, study_tasks(seeded))
    _assert_rejected(ei.value, ["latin1.jsonl:2: not valid UTF-8 (byte 0xe9",
                                "save the file as UTF-8"])
    assert snapshot(seeded) == before


def test_changed_item_needs_update(seeded, tmp_path):
    before = snapshot(seeded)
    p = _write(tmp_path, "changed.jsonl", jsonl(item("c"), item("a", response="new text")))
    records = read_items(p, study_tasks(seeded))
    with pytest.raises(FormatError) as ei:
        import_item_records(seeded, records, file=p.name)
    _assert_rejected(ei.value, ["changed.jsonl:2: field 'id': item 'a' already exists with "
                                "different content; re-import with --update"])
    assert snapshot(seeded) == before  # 'c' was valid but is not half-imported
    res = import_item_records(seeded, records, file=p.name, update=True)
    assert (res.added, res.updated, res.unchanged) == (1, 1, 0)


RATING_CASES = [
    ("unknown_dim.csv", "item_id,rater,dimension,score\na,ann,empathy,4\na,ann,warmth,3\n",
     ["unknown_dim.csv:3: field 'dimension': unknown dimension 'warmth'"]),
    ("off_scale.csv", "item_id,rater,dimension,score\na,ann,empathy,4\nb,ann,safety,7\n",
     ["off_scale.csv:3: field 'score': score '7' is off the scale; allowed: an integer from "
      "1 to 5"]),
    ("not_number.csv", "item_id,rater,dimension,score\na,ann,empathy,high\n",
     ["not_number.csv:2: field 'score': score 'high' is not an integer from 1 to 5"]),
    ("half_point.csv", "item_id,rater,dimension,score\na,ann,empathy,3.5\n",
     ["half_point.csv:2: field 'score': score '3.5' is off the scale"]),
    ("unknown_item.csv", "item_id,rater,dimension,score\nzz,ann,empathy,4\n",
     ["unknown_item.csv:2: field 'item_id': unknown item 'zz'"]),
    ("no_score_col.csv", "item_id,rater,dimension\na,ann,empathy\n",
     ["no_score_col.csv:1: field 'score': required column is missing"]),
    ("extra_col.csv", "item_id,rater,dimension,score,mood\na,ann,empathy,4,ok\n",
     ["extra_col.csv:1: field 'mood': unknown column"]),
    ("dup_rating.csv", "item_id,rater,dimension,score\na,ann,empathy,4\na,ann,empathy,5\n",
     ["dup_rating.csv:3: duplicate rating of item 'a' by 'ann' on 'empathy' (first on line 2)"]),
    ("not_applicable.csv", "item_id,rater,dimension,score\na,ann,memory_fidelity,4\n",
     ["not_applicable.csv:2: field 'dimension': 'memory_fidelity' does not apply to task "
      "'dialogue' of item 'a'"]),
    ("header_only.csv", "item_id,rater,dimension,score\n",
     ["header_only.csv: the file has a header but no rating rows"]),
    ("empty_rater.csv", "item_id,rater,dimension,score\na,,empathy,4\n",
     ["empty_rater.csv:2: field 'rater': must not be empty"]),
    ("bad_flag.csv", "item_id,rater,dimension,score,comment,flags\na,ann,safety,2,,urgent\n",
     ["bad_flag.csv:2: field 'flags': unknown flag 'urgent'"]),
]


@pytest.mark.parametrize("name,content,expected", RATING_CASES,
                         ids=[c[0] for c in RATING_CASES])
def test_malformed_ratings_file_rejected_whole(seeded, tmp_path, name, content, expected):
    before = snapshot(seeded)
    p = _write(tmp_path, name, content)
    with pytest.raises(FormatError) as ei:
        recs = read_ratings(p, current_rubric(seeded), item_tasks(seeded))
        import_rating_records(seeded, recs, file=p.name, add_raters=True)
    _assert_rejected(ei.value, expected)
    assert snapshot(seeded) == before


def test_changed_rating_needs_update(seeded, tmp_path):
    p = _write(tmp_path, "r.csv", "item_id,rater,dimension,score\na,ann,empathy,4\n")
    rub, tasks = current_rubric(seeded), item_tasks(seeded)
    import_rating_records(seeded, read_ratings(p, rub, tasks), file=p.name, add_raters=True)
    before = snapshot(seeded)
    p2 = _write(tmp_path, "r2.csv", "item_id,rater,dimension,score\nb,ann,empathy,2\n"
                                    "a,ann,empathy,5\n")
    with pytest.raises(FormatError) as ei:
        import_rating_records(seeded, read_ratings(p2, rub, tasks), file=p2.name, add_raters=True)
    _assert_rejected(ei.value, ["r2.csv:3: field 'score': 'ann' already rated item 'a' on "
                                "'empathy' differently; re-import with --update"])
    assert snapshot(seeded) == before
    res = import_rating_records(seeded, read_ratings(p2, rub, tasks), file=p2.name, update=True,
        add_raters=True)
    assert (res.added, res.updated) == (1, 1)
    assert snapshot(seeded)["rating_revision"] == 3  # first save, the new one, the update


RUBRIC_CASES = [
    ("no_anchor.toml", 'name = "R"\n[[dimensions]]\nkey = "warmth"\nscale = "1..3"\n'
                       '[dimensions.anchors]\n1 = "cold"\n3 = "warm"\n',
     ["no_anchor.toml:5: field 'dimensions.warmth.anchors.2': missing anchor text for level 2"]),
    ("bad_toml.toml", 'name = "R"\n[[dimensions]\nkey = 1\n', ["bad_toml.toml:2: not valid TOML"]),
    ("bad_scale.toml", 'name = "R"\n[[dimensions]]\nkey = "warmth"\nscale = "5..1"\n'
                       '[dimensions.anchors]\n1 = "x"\n',
     ["bad_scale.toml:4: field 'dimensions.warmth.scale': range '5..1' must go from a smaller"]),
    ("dup_dim.toml", 'name = "R"\n[[dimensions]]\nkey = "w"\nscale = "binary"\n'
                     '[dimensions.anchors]\n0 = "no"\n1 = "yes"\n'
                     '[[dimensions]]\nkey = "w"\nscale = "binary"\n'
                     '[dimensions.anchors]\n0 = "no"\n1 = "yes"\n',
     ["dup_dim.toml:9: field 'dimensions[2].key': duplicate dimension key 'w'"]),
    ("bad_task.toml", 'name = "R"\n[[dimensions]]\nkey = "w"\nscale = "binary"\n'
                      'tasks = ["poetry"]\n[dimensions.anchors]\n0 = "no"\n1 = "yes"\n',
     ["bad_task.toml:5: field 'dimensions.w.tasks': unknown task 'poetry'"]),
]


@pytest.mark.parametrize("name,content,expected", RUBRIC_CASES,
                         ids=[c[0] for c in RUBRIC_CASES])
def test_malformed_rubric_rejected(tmp_path, name, content, expected):
    p = _write(tmp_path, name, content)
    with pytest.raises(FormatError) as ei:
        load_rubric(p)
    for frag in expected:
        assert frag in str(ei.value), str(ei.value)


def test_an_unknown_rater_is_refused_with_its_line_unless_add_raters(seeded, tmp_path):
    """Issue 34: `demo-ratr` (a typo) silently became a new rater and the import exited 0.
    Each unknown name is an error on its first line, with the close known name; with
    --add-raters they are created, and the result says how many."""
    from data.raters import add_rater

    add_rater(seeded, "demo-rater")
    p = _write(tmp_path, "r.csv", "item_id,rater,dimension,score\na,demo-rater,empathy,4\n"
                                  "b,demo-ratr,empathy,3\na,demo-ratr,safety,2\nb,zed,empathy,1\n")
    rub, tasks = current_rubric(seeded), item_tasks(seeded)
    before = snapshot(seeded)
    with pytest.raises(FormatError) as ei:
        import_rating_records(seeded, read_ratings(p, rub, tasks), file=p.name)
    assert [str(x) for x in ei.value.problems] == [
        "r.csv:3: field 'rater': unknown rater 'demo-ratr' (2 rows, the first here) (did you "
        "mean 'demo-rater'?); check the name, or pass --add-raters to create it",
        "r.csv:5: field 'rater': unknown rater 'zed' (1 row, the first here); check the name, "
        "or pass --add-raters to create it"]
    assert snapshot(seeded) == before
    res = import_rating_records(seeded, read_ratings(p, rub, tasks), file=p.name,
                                add_raters=True)
    assert res.raters_added == ("demo-ratr", "zed") and res.added == 4
    assert str(res) == "4 added, 0 updated, 0 unchanged; 2 raters added (demo-ratr, zed)"
    again = import_rating_records(seeded, read_ratings(p, rub, tasks), file=p.name)
    assert str(again) == "0 added, 0 updated, 4 unchanged"  # known now: no flag needed


def test_the_command_refuses_an_unknown_rater_and_says_what_it_added(seeded, tmp_path):
    from typer.testing import CliRunner

    from annotate.cli import app

    db = seeded.url.render_as_string(hide_password=False)
    p = _write(tmp_path, "r.csv", "item_id,rater,dimension,score\na,ann,empathy,4\n")
    no = CliRunner().invoke(app, ["import", "ratings", str(p), "--db", db])
    assert no.exit_code == 1 and "r.csv:2: field 'rater': unknown rater 'ann'" in str(
        no.exception)
    yes = CliRunner().invoke(app, ["import", "ratings", str(p), "--db", db, "--add-raters"])
    assert yes.exit_code == 0 and "1 added, 0 updated, 0 unchanged; 1 rater added (ann)" \
        in yes.output


def test_every_problem_of_a_file_at_once_structure_and_fields(seeded, tmp_path):
    """Issue 34: a short row (or a stray quote) hid the file's field errors until it was
    fixed. One attempt now lists them all, in line order."""
    p = _write(tmp_path, "r.csv", "item_id,rater,dimension,score\n"
                                  "a,ann,empathy,7\n"          # 2: off the scale
                                  "a,ann\n"                    # 3: short row
                                  "b,ann,kindness,3\n"         # 4: unknown dimension
                                  'c,ann,"safety,3\n'          # 5: a stray quote
                                  "zz,ann,empathy,3\n"         # 6: unknown item
                                  "b,ann,fluency,three\n")     # 7: not a number
    with pytest.raises(FormatError) as ei:
        read_ratings(p, current_rubric(seeded), item_tasks(seeded))
    assert [(x.line, x.field) for x in ei.value.problems] == [
        (2, "score"), (3, None), (4, "dimension"), (5, None), (6, "item_id"), (7, "score")]
    text = str(ei.value)
    assert "r.csv:3: 2 cells, fewer than the header's 4 columns" in text
    assert "r.csv:5: a quoted cell opened on line 5 is never closed" in text


def test_the_message_lists_fifty_problems_and_counts_the_rest(seeded, tmp_path):
    rows = "".join(f"a,ann,empathy,{9 + i}\n" for i in range(60))
    p = _write(tmp_path, "r.csv", "item_id,rater,dimension,score\n" + rows)
    with pytest.raises(FormatError) as ei:
        read_ratings(p, current_rubric(seeded), item_tasks(seeded))
    assert len(ei.value.problems) == 60
    lines = str(ei.value).splitlines()
    assert len(lines) == 1 + 50 + 1 and lines[-1] == "  … and 10 more"

"""Imports that must refuse (issue 36), each with a clear message naming file, line and field,
nothing written, and no endless read: a device or pipe for a file, a file or a line past the
caps (which an option raises), a key twice in one JSON object, a column twice in a CSV
header, a lone surrogate in a metadata key. And a comment is the rater's words: export then
import gives it back byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from data._files import Limits
from data.errors import FormatError
from data.exports import export_ratings_csv
from data.importing import import_items_file, import_rating_records, item_tasks
from data.ratings import read_ratings
from data.study import current_rubric
from tests.data.test_hostile_files import run_h2h
from tests.helpers import item, jsonl, snapshot


def _h2h(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "annotate.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def study_db(tmp_path):
    db = tmp_path / "s.db"
    assert _h2h("init", "--db", str(db)).returncode == 0
    return db


def test_a_device_is_refused_before_a_byte_is_read(study_db):
    """`h2h import items /dev/zero` read for ever while its memory grew."""
    proc = _h2h("import", "items", "/dev/zero", "--db", str(study_db), timeout=30)
    assert proc.returncode == 1
    assert "/dev/zero: is not a regular file (a device, a pipe or a socket)" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_a_pipe_is_refused_without_waiting_for_a_writer(engine, tmp_path):
    fifo = tmp_path / "items.jsonl"
    os.mkfifo(fifo)
    done = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            import_items_file(engine, fifo)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(20):  # nobody ever writes to it: an open() would block here
        with open(fifo, "wb"):
            pass
        pytest.fail("the import opened the pipe and waited for a writer")
    assert isinstance(errors[0], FormatError) and "is not a regular file" in str(errors[0])


def test_the_size_cap_refuses_with_the_option_to_raise_it(tmp_path, capsys, monkeypatch,
                                                          study_db):
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(*[item(f"i{n}", response="x" * 5000) for n in range(300)]),
                 encoding="utf-8")  # 1.6 MB
    code, text = run_h2h(capsys, monkeypatch, "import", "items", str(p), "--db",
                         str(study_db), "--max-size", "1MB")
    assert code == 1
    assert "items.jsonl: the file is 1.58 MB, more than the 1 MB" in text
    assert "raise the limit with --max-size" in text
    code, text = run_h2h(capsys, monkeypatch, "import", "items", str(p), "--db",
                         str(study_db), "--max-size", "2MB")
    assert code == 0 and "300 added" in text


def test_the_line_cap_names_the_line_and_the_option(tmp_path, capsys, monkeypatch, study_db):
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(item("a"), item("b", response="y" * 2_000_000), item("c")),
                 encoding="utf-8")
    code, text = run_h2h(capsys, monkeypatch, "import", "items", str(p), "--db",
                         str(study_db), "--max-line", "1MB")
    assert code == 1
    assert "items.jsonl:2: line 2 is longer than 1 MB" in text and "--max-line" in text
    code, text = run_h2h(capsys, monkeypatch, "import", "items", str(p), "--db",
                         str(study_db), "--max-line", "4MB")
    assert code == 0 and "3 added" in text
    code, text = run_h2h(capsys, monkeypatch, "import", "items", str(p), "--db",
                         str(study_db), "--max-line", "lots")
    assert code == 1 and "'lots' is not a size such as 500MB or 2GB" in text


def test_a_line_with_no_end_stops_at_the_cap(engine, tmp_path):
    """A regular file of zeros (no line break anywhere): one capped read, then the refusal."""
    p = tmp_path / "zeros.jsonl"
    with open(p, "wb") as fh:
        fh.truncate(64 << 20)
    before = snapshot(engine)
    with pytest.raises(FormatError, match="line 1 is longer than 1.05 MB"):
        import_items_file(engine, p, limits=Limits(max_line=1 << 20))
    assert snapshot(engine) == before


@pytest.mark.parametrize("line,where", [
    ('{"id": "ok2", "task": "dialogue", "context": {"turns": [{"role": "user", "text": "hi"}]}, '
     '"response": "r", "id": "ok99"}', "the key 'id' appears twice"),
    (json.dumps(item("ok3"))[:-1] + ', "metadata": {"a": 1}}', "the key 'metadata' appears"),
    (json.dumps(item("ok4", metadata={"w": 1})).replace('{"w": 1}', '{"w": 1, "w": 2}'),
     "the key 'w' appears twice in one object"),
    (json.dumps(item("ok5")).replace('"text": "hello from ok5"',
                                     '"text": "a", "text": "b"'), "the key 'text' appears"),
])
def test_a_key_twice_in_one_object_is_refused(engine, tmp_path, line, where):
    """``{"id": "ok2", …, "id": "ok99"}`` was imported as ok99."""
    p = tmp_path / "dup.jsonl"
    p.write_text(jsonl(item("fine")) + line + "\n", encoding="utf-8")
    before = snapshot(engine)
    with pytest.raises(FormatError) as ei:
        import_items_file(engine, p)
    assert f"dup.jsonl:2: {where}" in str(ei.value)
    assert snapshot(engine) == before


def test_a_column_twice_in_a_csv_header_is_refused(engine, tmp_path):
    """``response,response`` kept the second cell and dropped the first without a word."""
    p = tmp_path / "items.csv"
    p.write_text("id,task,turns,response,response\nx,dialogue,user: hi,first,second\n",
                 encoding="utf-8")
    before = snapshot(engine)
    with pytest.raises(FormatError) as ei:
        import_items_file(engine, p)
    assert ("items.csv:1: field 'response': the header names this column twice (columns 4 "
            "and 5)") in str(ei.value)
    r = tmp_path / "ratings.csv"
    r.write_text("item_id,rater,dimension,score,score\nx,ann,empathy,4,2\n", encoding="utf-8")
    with pytest.raises(FormatError, match="ratings.csv:1: field 'score': the header names"):
        read_ratings(r, current_rubric(engine), item_tasks(engine))
    assert snapshot(engine) == before


@pytest.mark.parametrize("meta,field", [
    ('{"\\udc80": 1}', "metadata"),
    ('{"ok": {"\\ud800x": 1}}', "metadata.ok"),
    ('{"ok": "\\udfff"}', "metadata.ok"),
])
def test_a_lone_surrogate_is_refused_in_keys_as_in_values(engine, tmp_path, meta, field):
    """A key ``"\\udc80"`` was stored as three U+FFFD characters."""
    p = tmp_path / "s.jsonl"
    p.write_text(jsonl(item("x")).replace('"metadata": {}', f'"metadata": {meta}'),
                 encoding="utf-8")
    before = snapshot(engine)
    with pytest.raises(FormatError) as ei:
        import_items_file(engine, p)
    assert f"s.jsonl:1: field '{field}':" in str(ei.value)
    assert "lone surrogate (\\u" in str(ei.value)
    assert snapshot(engine) == before


COMMENTS = [" leading", "trailing ", "  both  ", "\ttab\t", "new\nline ", " 我担心 ",
            "\u3000全角空格\u3000", "quote \" and, comma ", "   ", "plain", "cr\r", "\u00a0nbsp"]


def test_comments_survive_export_and_import_byte_for_byte(engine, tmp_path):
    """6 of 108 comments came back trimmed. Import keeps a comment as written; export
    writes it so; the round trip gives every one back exactly."""
    p = tmp_path / "items.jsonl"
    p.write_text(jsonl(*[item(f"c{i}") for i in range(len(COMMENTS))]), encoding="utf-8")
    import_items_file(engine, p)
    rows = ["item_id,rater,dimension,score,comment"] + [
        f'c{i},ann,empathy,3,"{c.replace(chr(34), chr(34) * 2)}"'
        for i, c in enumerate(COMMENTS)]
    src = tmp_path / "ratings.csv"
    src.write_bytes(("\n".join(rows) + "\n").encode("utf-8"))
    recs = read_ratings(src, current_rubric(engine), item_tasks(engine))
    assert [r.comment for r in recs] == COMMENTS
    import_rating_records(engine, recs, file=src.name, add_raters=True)
    exported = tmp_path / "export.csv"
    exported.write_text(export_ratings_csv(engine), encoding="utf-8", newline="")
    back = read_ratings(exported, current_rubric(engine), item_tasks(engine))
    assert {r.item_id: r.comment for r in back} == {f"c{i}": c for i, c in enumerate(COMMENTS)}
    # and the re-import finds every rating unchanged
    res = import_rating_records(engine, back, file=exported.name)
    assert (res.added, res.updated, res.unchanged) == (0, 0, len(COMMENTS))


def test_a_reader_that_must_stop_still_reports_what_came_before(engine, tmp_path):
    """An undecodable line ends the reading; the problems found before it are kept."""
    p = tmp_path / "mixed.jsonl"
    p.write_bytes(jsonl(item("a"), item("b", task="poetry")).encode() + b"\xff\xfe oops\n")
    with pytest.raises(FormatError) as ei:
        import_items_file(engine, p)
    text = str(ei.value)
    assert "mixed.jsonl:2: field 'task': unknown task 'poetry'" in text
    assert "mixed.jsonl:3: not valid UTF-8 (byte 0xff at column 1)" in text

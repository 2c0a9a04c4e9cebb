"""A streamed item import (issue 36, part 6) keeps the all-or-nothing guarantee at any size,
and its memory does not grow with the file. The sizes that matter (232,500 and 1,000,000
items, peak RSS under 300 MB) are measured in benchmarks/bench_import_memory.py; here, small
files show the behaviour: a bad line, a conflict or a repeated id far into the file leaves the
study untouched, and the memory Python allocates for 4,000 items is that for 1,000."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from data import importing
from data.errors import FormatError
from data.importing import import_items_file
from tests.helpers import item, snapshot


def _write(path, n: int, *, bad_at: int | None = None, twice: tuple[int, int] | None = None,
           start: int = 0) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(start, start + n):
            line = i - start + 1
            if line == bad_at:
                fh.write('{"id": "broken", "task": \n')
                continue
            iid = f"it{twice[0]:06d}" if twice and line == twice[1] else f"it{i:06d}"
            fh.write(json.dumps(item(iid, response=f"reply {i} " + "x" * 200)) + "\n")


def test_a_bad_line_far_into_the_file_leaves_the_study_untouched(engine, tmp_path):
    p = tmp_path / "items.jsonl"
    _write(p, 100)
    import_items_file(engine, p)
    before = snapshot(engine)
    _write(p, 6_000, bad_at=5_999, start=100)
    with pytest.raises(FormatError) as ei:
        import_items_file(engine, p)
    assert "items.jsonl:5999: not valid JSON" in str(ei.value)
    assert snapshot(engine) == before


def test_a_conflict_found_after_thousands_of_rows_were_written_rolls_them_back(engine,
                                                                               tmp_path):
    """The study is written in chunks within one transaction; a changed item at row 5,500
    (already in the study with other content) is found after 5,499 new rows went in: all of
    them are rolled back."""
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps(item("it005599", response="the stored text")) + "\n",
                     encoding="utf-8")
    import_items_file(engine, first)
    before = snapshot(engine)
    p = tmp_path / "items.jsonl"
    _write(p, 6_000, start=100)  # holds it005599 at line 5,500, with other content
    with pytest.raises(FormatError) as ei:
        import_items_file(engine, p)
    assert ("items.jsonl:5500: field 'id': item 'it005599' already exists with different "
            "content") in str(ei.value)
    assert snapshot(engine) == before
    res = import_items_file(engine, p, update=True)
    assert (res.added, res.updated, res.unchanged) == (5_999, 1, 0)


def test_a_repeated_id_far_apart_names_both_lines(engine, tmp_path):
    p = tmp_path / "items.jsonl"
    _write(p, 4_000, twice=(7, 3_500))
    before = snapshot(engine)
    with pytest.raises(FormatError) as ei:
        import_items_file(engine, p)
    assert "items.jsonl:3500: field 'id': duplicate id 'it000007' (first on line 8)" in \
        str(ei.value)
    assert snapshot(engine) == before


def _peak(engine, path) -> int:
    tracemalloc.start()
    try:
        res = import_items_file(engine, path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert res.added > 0


def test_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    """Python's peak allocation while importing 4,000 items is about that for 1,000 (the
    whole-file import held every record at once: four times as much). The study is written
    250 rows at a time here instead of 2,000, so both files span several chunks (4 and 16)
    at a quarter of the size: with the chunks made larger than the file (every record held
    at once) the peak for 4,000 is 3.8 times that for 1,000, and this test fails."""
    from data.engine import get_engine
    from data.study import init_study

    monkeypatch.setattr(importing, "_CHUNK", 250)
    peaks = []
    for n in (1_000, 4_000):
        engine = get_engine(tmp_path / f"s{n}.db")
        init_study(engine, name="s")
        p = tmp_path / f"items{n}.jsonl"
        _write(p, n)
        peaks.append(_peak(engine, p))
        engine.dispose()
    small, large = peaks
    assert large < 1.3 * small, f"{small / 1e6:.1f} MB for 1,000, {large / 1e6:.1f} MB for 4,000"

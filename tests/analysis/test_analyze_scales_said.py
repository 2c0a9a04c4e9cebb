"""`h2h analyze --ratings file.csv` without a rubric (issue 34): a scale taken from the data
is said where it is seen, and a text score has an order only when the user gives one."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from annotate.cli import app
from data.errors import FormatError

ROWS = [("a", 3, 3), ("b", 4, 4), ("c", 5, 4), ("d", 4, 5), ("e", 3, 3), ("f", 5, 5)]


def _csv(tmp_path, rows, name="r.csv"):
    p = tmp_path / name
    p.write_text("item_id,rater,dimension,score\n" + "".join(
        f"{i},r1,{d},{x}\n{i},r2,{d},{y}\n" for d, i, x, y in rows), encoding="utf-8")
    return p


def _run(*args):
    return CliRunner().invoke(app, ["analyze", "--bootstrap", "0", *args],
                              env={"COLUMNS": "200"})


def test_an_inferred_scale_is_said_above_the_tables(tmp_path):
    """A 7 in a study of 1..5 scores made safety's scale 3..7, silently (exit 0)."""
    rows = [("empathy", *r) for r in ROWS] + [("safety", *r) for r in ROWS]
    rows[-1] = ("safety", "f", 7, 5)
    res = _run("--ratings", str(_csv(tmp_path, rows)))
    assert res.exit_code == 0, res.output
    first = res.stdout.splitlines()[0]
    assert first.startswith("Scales inferred from the data (no rubric, no --scale): "
                            "empathy 3..5; safety 3..7.")
    assert "--scale empathy=1..5" in first
    declared = _run("--ratings", str(_csv(tmp_path, rows)), "--scale", "empathy=1..5",
                    "--scale", "safety=1..7")
    assert "Scales inferred" not in declared.stdout  # declared: nothing inferred to say
    # with --json the JSON stays clean on stdout and the sentence goes to stderr (and into
    # meta.scale_notes)
    js = _run("--ratings", str(_csv(tmp_path, rows)), "--json")
    doc = json.loads(js.stdout)
    assert "safety 3..7" in js.stderr and "safety 3..7" in doc["meta"]["scale_notes"][0]


def test_text_scores_need_an_order_or_nominal(tmp_path):
    """`three` made the dimension nominal (alphabetical categories) and exited 0."""
    rows = [("empathy", i, ["two", "three", "four"][x % 3], ["two", "three", "four"][y % 3])
            for i, x, y in ROWS]
    p = _csv(tmp_path, rows)
    res = _run("--ratings", str(p))
    assert res.exit_code == 1 and isinstance(res.exception, FormatError)
    assert [str(x) for x in res.exception.problems] == [
        "r.csv:2: field 'score': 'two' is text, and dimension 'empathy' has no declared "
        "scale: give its labels in order with --scale empathy=four,three,two (an ordinal "
        "scale), or --level nominal to take text scores as unordered categories"]
    ordered = _run("--ratings", str(p), "--scale", "empathy=two,three,four")
    assert ordered.exit_code == 0 and "Scales inferred" not in ordered.stdout
    nominal = _run("--ratings", str(p), "--level", "nominal")
    assert nominal.exit_code == 0
    assert "empathy four, three, two (unordered categories)" in nominal.stdout.splitlines()[0]


def test_a_word_among_numbers_is_an_error_naming_its_line(tmp_path):
    rows = [("empathy", *r) for r in ROWS]
    rows[2] = ("empathy", "c", "three", 4)
    res = _run("--ratings", str(_csv(tmp_path, rows)))
    assert res.exit_code == 1
    assert "r.csv:6: field 'score': 'three' is not a number for empathy" in str(res.exception)


def test_every_problem_of_a_ratings_file_at_once(tmp_path):
    """Issue 34: a short row or a stray quote hid the file's other errors until it was
    fixed (and a stray quote silently merged rows). One run lists them all, line by line."""
    p = tmp_path / "r.csv"
    p.write_text("item_id,rater,dimension,score\n"
                 + "".join(f"{i},r1,empathy,3\n{i},r2,empathy,4\n" for i in "abcdef")
                 + "g,r1,empathy,7\n"        # 14: off the declared scale
                 "g,r2\n"                    # 15: short row
                 "h,,empathy,3\n"            # 16: no rater
                 'h,r2,"empathy,3\n'         # 17: a stray quote, never closed
                 "a,r1,empathy,5\n"          # 18: a second score of a, r1
                 "i,r1,empathy,three\n",     # 19: text among numbers
                 encoding="utf-8")
    res = _run("--ratings", str(p), "--scale", "empathy=1..5")
    assert res.exit_code == 1 and isinstance(res.exception, FormatError)
    assert [(x.line, x.field) for x in res.exception.problems] == [
        (14, "score"), (15, None), (16, "rater"), (17, None), (18, None), (19, "score")]
    text = str(res.exception)
    assert "r.csv:15: 2 cells, fewer than the header's 4 columns" in text
    assert "r.csv:17: a quoted cell opened on line 17 is never closed" in text
    assert "r.csv:19: field 'score': 'three' is not a number" in text
    assert "r.csv:14: field 'score'" in text and "7" in text


def test_every_problem_of_a_judges_file_at_once(tmp_path):
    r = _csv(tmp_path, [("empathy", *x) for x in ROWS])
    j = tmp_path / "j.csv"
    j.write_text("item_id,judge,dimension,score\n"
                 "a,gpt,empathy,3\n"
                 "b,gpt\n"                   # 3: short row
                 ",gpt,empathy,4\n"          # 4: no item
                 "c,,empathy,4\n"            # 5: no judge
                 'd,gpt,"empathy,4\n'        # 6: a stray quote, never closed
                 "e,gpt,,4\n"                # 7: no dimension
                 "a,gpt,empathy,5\n",        # 8: a second score of a
                 encoding="utf-8")
    res = _run("--ratings", str(r), "--judges", str(j))
    assert res.exit_code == 1 and isinstance(res.exception, FormatError)
    assert [(x.line, x.field) for x in res.exception.problems] == [
        (3, None), (4, "item_id"), (5, "judge"), (6, None), (7, "dimension"), (8, None)]
    assert "j.csv:8: duplicate row for item_id=a, judge=gpt, dimension=empathy (first on " \
        "line 2)" in str(res.exception)

"""Hostile files and values, as an attacker or an unlucky user brings them: each gives
``file:line: field: problem``, exit status 1, no traceback, and nothing written."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from annotate.cli import main
from data.engine import get_engine
from data.errors import FormatError, H2HError
from data.importing import import_item_records, import_rating_records, item_tasks, study_tasks
from data.items import read_items
from data.rating_service import save_item_ratings
from data.ratings import read_ratings
from data.study import current_rubric, init_study
from tests.helpers import item, jsonl, snapshot

pytestmark = pytest.mark.integration  # left out of `make test-fast`

HEADER = "item_id,rater,dimension,score,comment\n"


def run_h2h(capsys, monkeypatch, *args: str) -> tuple[int, str]:
    """`h2h ARGS` in this process, through the console entry point: (exit status, output)."""
    monkeypatch.setattr(sys, "argv", ["h2h", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out + err


@pytest.fixture
def study(engine, tmp_path):
    p = tmp_path / "good.jsonl"
    p.write_text(jsonl(item("a"), item("b"), item("c"), item("d")), encoding="utf-8")
    import_item_records(engine, read_items(p, study_tasks(engine)), file=p.name)
    return engine


def _import(engine, path: Path) -> None:
    if path.suffix == ".csv" and path.read_bytes().startswith(b"item_id"):
        recs = read_ratings(path, current_rubric(engine), item_tasks(engine))
        import_rating_records(engine, recs, file=path.name, add_raters=True)
    else:
        import_item_records(engine, read_items(path, study_tasks(engine)), file=path.name)


def _deep(n: int) -> str:
    return "[" * n + "]" * n


DEEP_META = {"k": json.loads(_deep(40))}
HOSTILE = [
    # a stray quote used to swallow the next three rows into a comment: "1 added", exit 0
    ("quote.csv", HEADER + 'a,ann,empathy,4,"oops\nb,ann,empathy,3,x\nc,ann,empathy,3,y\n'
                           "d,ann,empathy,3,z\n",
     "quote.csv:2: a quoted cell opened on line 2 is never closed"),
    ("short_row.csv", HEADER + "a,ann,empathy,4,ok\nb,ann,empathy\n",
     "short_row.csv:3: 3 cells, fewer than the header's 5 columns"),
    ("long_row.csv", HEADER + "a,ann,empathy,4,ok,extra\n",
     "long_row.csv:2: 6 cells, more than the header's 5 columns"),
    ("bad_quoting.csv", HEADER + 'a,ann,empathy,4,"ok"x\n', "bad_quoting.csv:2: bad quoting"),
    ("huge_cell.csv", HEADER + "a,ann,empathy,4," + "x" * 140_000 + "\n",
     "huge_cell.csv:2: a cell is longer than 131,072 characters"),
    ("nan_score.csv", HEADER + "a,ann,empathy,nan,\n",
     "nan_score.csv:2: field 'score': score 'nan' is not an integer from 1 to 5"),
    ("inf_score.csv", HEADER + "a,ann,empathy,inf,\n",
     "inf_score.csv:2: field 'score': score 'inf' is not an integer from 1 to 5"),
    ("digits_score.csv", HEADER + "a,ann,empathy," + "9" * 5000 + ",\n",
     "digits_score.csv:2: field 'score': score '999"),
    ("nul.csv", HEADER.encode() + b"a,ann,empathy,4,bad\x00byte\n",
     "nul.csv:2: contains a NUL byte (0x00) at column 20"),
    ("rater_name.csv", HEADER + 'a,"![x](http://127.0.0.1:9/x.png)",empathy,4,\n',
     "rater_name.csv:2: field 'rater': rater name '![x](http://127.0.0.1:9/x.png)' is not "
     "usable"),
    ("deep.jsonl", '{"id": "x", "metadata": ' + _deep(100_000) + "}\n",
     "deep.jsonl:1: nested too deeply"),
    ("deep40.jsonl", jsonl(item("x", metadata=DEEP_META)),
     "deep40.jsonl:1: field 'metadata.k.0.0.0.0.0.0.0.0.0.0.0.0.0.0.…': nested deeper than "
     "32 levels"),
    ("digits.jsonl", jsonl(item("x")) + '{"id": "y", "n": ' + "9" * 5000 + "}\n",
     "digits.jsonl:2: a number with more than 4,300 digits"),
    ("nan_meta.jsonl", jsonl(item("x")).replace('"metadata": {}', '"metadata": {"w": NaN}'),
     "nan_meta.jsonl:1: NaN is not a number JSON allows"),
    ("inf_meta.jsonl", jsonl(item("x")).replace('"metadata": {}',
                                                '"metadata": {"w": -Infinity}'),
     "inf_meta.jsonl:1: -Infinity is not a number JSON allows"),
    ("nul_escape.jsonl", jsonl(item("x", response="hi\x00there")),
     "nul_escape.jsonl:1: field 'response': contains a NUL character"),
    ("nul_key.jsonl", jsonl(item("x", metadata={"a\x00b": 1})),
     "nul_key.jsonl:1: field 'metadata': a key contains a NUL character"),
    ("nan_meta.csv", "id,task,turns,response,metadata\nx,dialogue,user: hi,hello,"
                     '"{""w"": NaN}"\n',
     "nan_meta.csv:2: field 'metadata': cannot read this cell: NaN is not a number"),
    ("quote_items.csv", 'id,task,turns,response\nx,dialogue,user: hi,"hello\ny,dialogue,'
                        "user: hi,there\n",
     "quote_items.csv:2: a quoted cell opened on line 2 is never closed"),
    ("rubric_digits.toml", 'name = "R"\n[[dimensions]]\nkey = "w"\nscale = "1..'
                           + "9" * 5000 + '"\n', "rubric_digits.toml:4: field "
                                                 "'dimensions.w.scale': required"),
    ("rubric_image.toml", 'name = "R"\nguidelines = "![a](http://127.0.0.1:9/g.png)"\n',
     "rubric_image.toml:2: field 'guidelines': images are not allowed in rubric text"),
    ("rubric_int.toml", "name = " + "9" * 5000 + "\n",
     "rubric_int.toml: not valid TOML: a number with more than 4,300 digits"),
]


@pytest.mark.parametrize("name,content,expected", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_file_rejected_whole(study, tmp_path, name, content, expected):
    """In the data layer, on SQLite and PostgreSQL alike (a NUL used to pass on SQLite and
    crash on PostgreSQL with DataError)."""
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    before = snapshot(study)
    with pytest.raises(FormatError) as ei:
        if name.endswith(".toml"):
            from data.rubric import load_rubric
            load_rubric(p)
        else:
            _import(study, p)
    assert expected in str(ei.value), str(ei.value)
    assert snapshot(study) == before


CLI_CASES = [c for c in HOSTILE if c[0] in ("quote.csv", "huge_cell.csv", "deep.jsonl",
                                             "digits.jsonl", "nul_escape.jsonl",
                                             "nan_score.csv", "rater_name.csv")]


@pytest.mark.parametrize("name,content,expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_hostile_file_through_the_cli(tmp_path, capsys, monkeypatch, name, content, expected):
    db = tmp_path / "s.db"
    assert run_h2h(capsys, monkeypatch, "init", "--db", str(db))[0] == 0
    good = tmp_path / "good.jsonl"
    good.write_text(jsonl(item("a"), item("b"), item("c"), item("d")), encoding="utf-8")
    assert run_h2h(capsys, monkeypatch, "import", "items", str(good), "--db", str(db))[0] == 0
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    before = snapshot(get_engine(db))
    kind = "ratings" if name.endswith(".csv") else "items"
    code, text = run_h2h(capsys, monkeypatch, "import", kind, str(p), "--db", str(db))
    assert code == 1, text
    assert expected in text and "Traceback" not in text
    assert snapshot(get_engine(db)) == before


def test_nul_in_a_comment_saved_from_the_app_is_refused_on_both_backends(study):
    with study.begin() as c:
        from sqlalchemy import text
        c.execute(text("INSERT INTO rater (name, role, active, simulated, created_at) "
                       "VALUES ('ann', 'rater', :t, :f, '2026-01-01 00:00:00')"),
                  {"t": True, "f": False})
        rid = c.execute(text("SELECT id FROM rater WHERE name = 'ann'")).scalar_one()
    before = snapshot(study)
    dims = current_rubric(study).dimensions_for("dialogue")
    with pytest.raises(H2HError, match="NUL"):
        save_item_ratings(study, rater_id=rid, item_id="a", scores={d.key: 3 for d in dims},
                          comment="fine\x00")
    assert snapshot(study) == before


# --- --db pointing at the wrong thing ------------------------------------------------------

COMMANDS = [
    ["init"], ["import", "items", "{items}"], ["import", "ratings", "{ratings}"],
    ["import", "rubric", "{rubric}"], ["export", "items"], ["export", "ratings"],
    ["raters", "add", "bob"], ["raters", "list"], ["raters", "deactivate", "bob"],
    ["analyze"], ["report", "--out", "{tmp}/rep"], ["assign"], ["calibrate", "--configs", "a"],
    ["judge", "cost"], ["judge", "configs"], ["judge", "export"], ["judge", "collect"],
    ["judge", "run", "--provider", "anthropic", "--model", "m", "--name", "j"],
    ["generate", "--provider", "anthropic", "--model", "m"],
    ["backup", "--out", "{tmp}/b.db"], ["serve"],
]


def _args(cmd: list[str], tmp: Path) -> list[str]:
    files = {"items": tmp / "i.jsonl", "ratings": tmp / "r.csv", "rubric": tmp / "r.toml"}
    files["items"].write_text(jsonl(item("a")), encoding="utf-8")
    files["ratings"].write_text(HEADER + "a,ann,empathy,4,\n", encoding="utf-8")
    shutil.copy(Path(__file__).parents[2] / "data" / "rubrics" / "companion.toml",
                files["rubric"])
    return [a.format(tmp=tmp, **files) for a in cmd]


def _h2h_subprocess(args: list[str]) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "annotate.cli", *args], capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_db_that_is_not_a_database(tmp_path, capsys, monkeypatch, cmd):
    db = tmp_path / "notes.db"
    db.write_bytes(b"Dear diary, this is not a database.\n" * 100)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    args = [*_args(cmd, tmp_path), "--db", str(db)]
    # serve would replace this process with the server if it started: run it apart
    code, text = (_h2h_subprocess(args) if cmd == ["serve"] else
                  run_h2h(capsys, monkeypatch, *args))
    assert code == 1, text
    assert f"'{db}' is not an SQLite database" in text and "Traceback" not in text
    assert "You can now view" not in text  # serve says it before any server starts
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("notes")) == \
        ["notes.db"]


def test_serve_on_a_port_of_its_choosing_refuses_another_programs_database(tmp_path):
    """`--port 0` (the server picks a port) used to wait forever on port 0 before checking
    the study, so a file that is a database but not a study was served."""
    db = tmp_path / "clinic.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE patients (id INTEGER PRIMARY KEY, name TEXT)")
    con.commit()
    con.close()
    code, text = _h2h_subprocess(["serve", "--db", str(db), "--port", "0"])
    assert code == 1 and "Traceback" not in text, text
    assert "not an h2htalk study" in text or "no h2htalk tables" in text, text


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c != ["init"]],
                         ids=lambda c: " ".join(c[:2]))
def test_missing_db_leaves_no_file_behind(tmp_path, capsys, monkeypatch, cmd):
    db = tmp_path / "typo.db"
    args = [*_args(cmd, tmp_path), "--db", str(db)]
    code, text = (_h2h_subprocess(args) if cmd == ["serve"] else
                  run_h2h(capsys, monkeypatch, *args))
    assert code == 1, text
    # serve says it its own way (it checks the path before loading the database layer)
    said = f"{db}: no study here yet" if cmd == ["serve"] else f"there is no study at '{db}'"
    assert said in text and "Traceback" not in text
    assert not any(p.name.startswith("typo") for p in tmp_path.iterdir())


def test_init_refuses_another_programs_sqlite_file_without_touching_it(tmp_path, capsys,
                                                                       monkeypatch):
    db = tmp_path / "clinic.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE patients (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO patients VALUES (1, 'x')")
    con.commit()
    con.close()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    code, text = run_h2h(capsys, monkeypatch, "init", "--db", str(db))
    assert code == 1 and "not an h2htalk study" in text
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest  # not switched to WAL
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clinic.db"]


def test_read_only_study_still_exports_analyzes_and_backs_up(tmp_path):
    """A study on read-only storage (an archive, a colleague's share): a read-only bind mount
    in a private mount namespace (works as root and without root)."""
    folder = tmp_path / "archive"
    folder.mkdir()
    db = folder / "s.db"
    eng = get_engine(db)
    init_study(eng, name="archived")
    items = tmp_path / "i.jsonl"
    items.write_text(jsonl(item("a"), item("b")), encoding="utf-8")
    import_item_records(eng, read_items(items, study_tasks(eng)), file="i")
    r = tmp_path / "r.csv"
    r.write_text(HEADER + "a,ann,empathy,4,\na,bob,empathy,5,\nb,ann,empathy,2,\n"
                          "b,bob,empathy,2,\n", encoding="utf-8")
    import_rating_records(eng, read_ratings(r, current_rubric(eng), item_tasks(eng)), file="r",
        add_raters=True)
    eng.dispose()
    for suffix in ("-wal", "-shm"):  # as a copied archive would be: the file alone
        assert not Path(f"{db}{suffix}").exists() or Path(f"{db}{suffix}").unlink() is None
    h2h = f"{sys.executable} -m annotate.cli"
    script = (f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} && "
              f"{{ touch {folder}/probe 2>/dev/null && echo WRITABLE; true; }} && "
              f"{h2h} export ratings --db {db} && echo '--' && "
              f"{h2h} analyze --db {db} --json > {tmp_path}/analysis.json && echo ANALYZED; "
              f"{h2h} backup --db {db} --out {tmp_path}/copy.db && echo BACKED-UP; "
              f"{h2h} raters add carol --db {db}; echo rc=$?")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert "WRITABLE" not in out, "the bind mount is not read-only"
    # the export's columns: item_id, task, scenario, model, condition, rater, … (docs/formats.md)
    assert "\na,dialogue,a,m,,ann,false,empathy,4,Good," in out, out
    assert "ANALYZED" in out and "BACKED-UP" in out, out
    assert json.loads((tmp_path / "analysis.json").read_text())["dimensions"]["empathy"]
    assert "Traceback" not in out and "rc=1" in out  # a write is refused with a message
    assert sorted(p.name for p in folder.iterdir()) == ["s.db"]

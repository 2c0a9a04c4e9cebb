"""The `h2h` command as a user runs it: real files, clear errors; the lifecycle and the user
errors in real processes (exit status, no traceback), the rest through the same entry point
in this process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import H2HResult, item, jsonl, run_h2h


def h2h(*args: str, check: bool = True, process: bool = False) -> H2HResult:
    """`h2h ARGS` in this process; ``process=True`` in a real one (the first two tests)."""
    return run_h2h(*args, check=check, process=process, timeout=120)


def real(*args: str, check: bool = True) -> H2HResult:
    """`h2h ARGS` in a real process."""
    return h2h(*args, check=check, process=True)


def test_study_lifecycle_through_the_cli(tmp_path: Path):
    db = str(tmp_path / "pilot.db")
    assert "Created study 'Pilot'" in real("init", "--db", db, "--name", "Pilot").stdout
    assert "is up to date" in real("init", "--db", db).stdout
    items = tmp_path / "items.jsonl"
    items.write_text(jsonl(item("a"), item("b")), encoding="utf-8")
    assert "2 added" in real("import", "items", str(items), "--db", db).stdout
    assert "0 added, 0 updated, 2 unchanged" in real("import", "items", str(items),
                                                    "--db", db).stdout
    add = real("raters", "add", "Dr Lee", "--db", db).stdout
    code = add.strip().splitlines()[-1]
    assert code.startswith("H2H-") and len(code) == 23
    listing = real("raters", "list", "--db", db).stdout
    assert "Dr Lee" in listing and code not in listing
    ratings = tmp_path / "r.csv"
    ratings.write_text("item_id,rater,dimension,score\na,Dr Lee,empathy,5\nb,Dr Lee,safety,\n",
                       encoding="utf-8")
    assert "2 added" in real("import", "ratings", str(ratings), "--db", db, "--add-raters").stdout
    out = tmp_path / "export.csv"
    real("export", "ratings", "--db", db, "--out", str(out))
    # item_id, task, scenario, model, condition, rater, rater_simulated, dimension, score, label
    assert out.read_text(encoding="utf-8").splitlines()[1].startswith(
        "a,dialogue,a,m,,Dr Lee,false,empathy,5,Excellent,")
    exported = real("export", "items", "--db", db).stdout
    assert exported == jsonl(item("a"), item("b"))
    assert "Deactivated" in real("raters", "deactivate", "Dr Lee", "--db", db).stdout


def test_user_errors_are_one_clear_message(tmp_path: Path):
    db = str(tmp_path / "s.db")
    no_study = real("import", "items", "x.jsonl", "--db", db, check=False)
    assert no_study.returncode == 1 and "create one with `h2h init --db" in no_study.stderr
    assert not Path(db).exists()  # nothing left behind
    real("init", "--db", db)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl(item("a")) + '{"id": "b", "task": "dialogue"}\n', encoding="utf-8")
    proc = real("import", "items", str(bad), "--db", db, check=False)
    assert proc.returncode == 1
    assert "bad.jsonl:2: field 'context': required field is missing" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    missing = real("import", "items", str(tmp_path / "none.jsonl"), "--db", db, check=False)
    assert missing.returncode == 1 and "none.jsonl: no such file" in missing.stderr
    url = real("init", "--db", "postgresql+psycopg://nobody@127.0.0.1:9/x", check=False)
    assert url.returncode == 1 and "cannot use the study database" in url.stderr
    assert "Traceback" not in url.stderr
    role = real("raters", "add", "x", "--role", "boss", "--db", db, check=False)
    assert role.returncode == 1 and "--role: 'boss' is not one of rater, admin" in role.stderr


def test_demo_builds_and_refuses_to_overwrite(tmp_path: Path):
    db = str(tmp_path / "demo.db")
    proc = h2h("demo", "--db", db)
    assert "147 items" in proc.stdout and "simulated ratings" in proc.stdout
    assert "Rater code (demo-rater): H2H-" in proc.stdout
    assert "Admin code (demo-admin): H2H-" in proc.stdout
    again = h2h("demo", "--db", db, check=False)
    assert again.returncode == 1 and "--force" in again.stderr
    assert h2h("demo", "--db", db, "--force").returncode == 0


@pytest.mark.parametrize("cmd", [
    ["init"], ["demo"], ["serve"], ["import", "items"], ["import", "ratings"],
    ["import", "rubric"], ["export", "items"], ["export", "ratings"], ["raters", "add"],
    ["raters", "list"], ["raters", "deactivate"],
])
def test_every_command_has_help_with_an_example(cmd):
    proc = h2h(*cmd, "--help")
    assert "Example: h2h " + cmd[0] in proc.stdout

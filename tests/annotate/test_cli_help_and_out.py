"""Every `h2h` command's `--help` at 80 and 120 columns reads as written, and every file a
command writes (`--out`) fails cleanly on a missing folder or a folder given as the path
(issue 34). In-process through Typer's CliRunner (fast); one subprocess shows what a person
sees on the terminal."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from annotate.cli import app
from annotate.cli_help import reflow
from data.errors import H2HError

ROOT = typer.main.get_command(app)


def _all(cmd, path: tuple[str, ...] = ()):
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _all(sub, (*path, name))


COMMANDS = dict(_all(ROOT))
LEAVES = {p: c for p, c in COMMANDS.items() if not hasattr(c, "commands")}


def _help(path: tuple[str, ...], width: int) -> str:
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width)})
    assert res.exit_code == 0, res.output
    return res.output


def _description(out: str) -> list[str]:
    """The command's description: the lines between the usage line and the first panel."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if "Usage:" in ln) + 1
    end = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("╭")), len(lines))
    return [ln.strip() for ln in lines[start:end]]


def _flat(text: str) -> str:
    """Rendered help as one line of words: borders and wrapping gone."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("path", sorted(COMMANDS), ids=lambda p: " ".join(p) or "h2h")
def test_help_reads_as_written(path, width):
    out = _help(path, width)
    cmd = COMMANDS[path]
    # nothing cut off: a word too long for its column was shown as "word…"
    assert "…" not in out, [ln for ln in out.splitlines() if "…" in ln]
    # a flag is a flag: no "<bool>" (nor any other "<type>"); an argument is FILE, not {file}
    assert not re.search(r"<(bool|str|int|float|path|list\[\w+\])>", out), out
    assert not re.search(r"Usage:.*\{\w+\}", out), out
    # no mid-sentence break: a line ends early only where its paragraph ends or an
    # example follows; the docstring's own line breaks are not kept (the width is the
    # terminal's, less the margin Rich leaves)
    desc = _description(out)
    for line, nxt in zip(desc, desc[1:], strict=False):
        if line and nxt and not nxt.startswith("Example:"):
            first = nxt.split()[0]
            assert len(line) + 1 + len(first) > width - 3, \
                f"broken early at {width} columns:\n{line}\n{nxt}"
    # every help text shows whole: the command's description and each option's help, square
    # brackets included ("pip install 'h2htalk[local]'" lost its "[local]" to Rich markup)
    flat = _flat(out)
    texts = [reflow(cmd.help or "")] + [p.help for p in cmd.params if getattr(p, "help", None)]
    for text in texts:
        for para in (text or "").split("\n\n"):
            words = _flat(para.replace("\\[", "["))
            if words and not words.startswith("Example:"):
                assert words in flat, f"not shown whole at {width} columns: {words!r}"


def test_square_brackets_survive_rich():
    """The report's case, as a person reads it."""
    out = _flat(_help(("judge", "run"), 120))
    assert "pip install 'h2htalk[local]'" in out


# -- --out ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("out")
    db = str(tmp / "s.db")
    runner = CliRunner()
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0
    items = tmp / "items.jsonl"
    items.write_text('{"id": "a", "task": "dialogue", "scenario": "a", "model": "m", '
                     '"context": {"turns": [{"role": "user", "text": "hi"}]}, '
                     '"response": "hello"}\n', encoding="utf-8")
    assert runner.invoke(app, ["import", "items", str(items), "--db", db]).exit_code == 0
    return db


# every option named --out, and what else its command needs to run
EXTRA = {("export", "matrix"): ["--dimension", "empathy"]}
FOLDER_OUTPUT = {("report",)}  # --out names a folder of files


def _out_commands():
    found = []
    for path, cmd in sorted(LEAVES.items()):
        if any("--out" in p.opts for p in cmd.params):
            found.append(path)
    return found


OUT_COMMANDS = _out_commands()


def test_the_out_commands_are_the_ones_we_know():
    """A new --out is tested below without anyone listing it; this only pins the count, so a
    refactor that loses the option is noticed too."""
    assert {" ".join(p) for p in OUT_COMMANDS} == {
        "analyze", "backup", "export items", "export matrix", "export ratings",
        "export preferences", "judge export", "leaderboard", "metrics export", "report"}


@pytest.mark.parametrize("path", OUT_COMMANDS, ids=" ".join)
def test_out_in_a_missing_folder_is_one_clear_line(path, study, tmp_path):
    target = tmp_path / "no-such-folder" / ("report" if path in FOLDER_OUTPUT else "x.csv")
    res = CliRunner().invoke(app, [*path, "--db", study, "--out", str(target),
                                   *EXTRA.get(path, [])])
    assert res.exit_code == 1
    assert isinstance(res.exception, H2HError), res.exception  # main() prints it, one line
    msg = str(res.exception)
    assert "\n" not in msg and "does not exist" in msg and str(target.parent) in msg
    assert not target.parent.exists()  # nothing created on a guess


@pytest.mark.parametrize("path", OUT_COMMANDS, ids=" ".join)
def test_out_given_a_folder_or_for_a_folder_a_file_is_one_clear_line(path, study, tmp_path):
    if path in FOLDER_OUTPUT:  # its --out is a folder: a file there is the mistake
        target = tmp_path / "a-file"
        target.write_text("x", encoding="utf-8")
        expected = "is a file; give a folder"
    else:
        target, expected = tmp_path, "is a folder; give a file name"
    res = CliRunner().invoke(app, [*path, "--db", study, "--out", str(target),
                                   *EXTRA.get(path, [])])
    assert res.exit_code == 1
    assert isinstance(res.exception, H2HError), res.exception
    msg = str(res.exception)
    assert "\n" not in msg and expected in msg and str(target) in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        ["a-file"] if path in FOLDER_OUTPUT else [])  # nothing written


def test_a_person_sees_one_line_and_no_traceback(study, tmp_path):
    for out in (str(tmp_path / "missing" / "x.csv"), str(tmp_path)):
        proc = subprocess.run([sys.executable, "-m", "annotate.cli", "export", "ratings",
                               "--db", study, "--out", out], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 1 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("Error: --out: ") and "Traceback" not in proc.stderr


def test_a_write_that_fails_says_why(tmp_path):
    """Permissions, a read-only or full disk: the path and the system's reason, one line
    (a read-only file of the kernel's stands for them: root may write anywhere else)."""
    from data.outfiles import write_out_text

    with pytest.raises(H2HError, match=r"^--out: cannot write '/proc/version': \w"):
        write_out_text(Path("/proc/version"), "x")


# -- --seed -----------------------------------------------------------------------------------

SEED_COMMANDS = [p for p, c in sorted(COMMANDS.items())  # `calibrate` itself has one
                 if any("--seed" in p_.opts for p_ in c.params)]


def test_the_seed_commands_are_the_ones_we_know():
    assert {" ".join(p) for p in SEED_COMMANDS} == {  # a lost --seed is noticed too
        "analyze", "arena", "assign", "calibrate", "calibrate auto", "calibrate drift", "demo",
        "judge pairwise", "judge run", "leaderboard", "pairs attention", "pairs make",
        "quality attention add", "report"}


@pytest.mark.parametrize("path", SEED_COMMANDS, ids=" ".join)
def test_a_negative_seed_is_refused_by_name_before_any_work(path, study):
    """numpy's seeds are non-negative: `leaderboard --seed -1` and `arena --seed -1` ended in
    numpy's traceback, `assign --seed -1` blamed --to-shrink (a user trial). Every --seed is
    refused at the command line, naming the option, before the study is read."""
    res = CliRunner().invoke(app, [*path, "--seed", "-1", "--db", study],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert "Invalid value for '--seed': must be 0 or more" in _flat(res.output)
    assert "Traceback" not in res.output


BOOTSTRAP_COMMANDS = [p for p, c in sorted(COMMANDS.items())
                      if any("--bootstrap" in p_.opts for p_ in c.params)]


@pytest.mark.parametrize("path", BOOTSTRAP_COMMANDS, ids=" ".join)
def test_a_bootstrap_beyond_any_use_is_refused_by_name(path, study):
    """`arena --bootstrap 99999999999999999999` ran on and on (a user trial)."""
    assert {" ".join(p) for p in BOOTSTRAP_COMMANDS} == {  # a lost check is noticed too
        "analyze", "arena", "calibrate", "calibrate auto", "calibrate drift", "judge pairwise",
        "leaderboard", "report"}
    for b in ("100001", "99999999999999999999"):
        res = CliRunner().invoke(app, [*path, "--bootstrap", b, "--db", study],
                                 env={"COLUMNS": "200"})
        assert res.exit_code == 2, (res.exit_code, res.output)
        assert "Invalid value for '--bootstrap': at most 100,000 resamples" in \
            _flat(res.output)

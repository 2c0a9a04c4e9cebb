"""Every `h2h` command: its `--help` (with an example whose options exist), and a run with real
arguments for the ones no other test runs (`import rubric`, `quality attention import`).

The list below names, for every command, the test that runs it with real arguments; a new
command fails ``test_every_command_is_run_by_a_test`` until it has one.
"""

from __future__ import annotations

import re
import shlex
from importlib import resources
from pathlib import Path

import pytest
import sqlalchemy as sa
import typer
from typer.testing import CliRunner

from annotate.cli import app
from tests.annotate.test_cli import h2h
from tests.helpers import item, jsonl

RUN_BY = {
    "init": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "analyze": "tests/analysis/test_analyze_cli.py, tests/analysis/test_pinned_judge.py",
    "report": "tests/analysis/test_report.py",
    # `h2h calibrate --configs …` itself (the group's own command): tests/annotate/
    # test_calibrate.py
    "calibrate auto": "tests/annotate/test_autocal.py",
    "calibrate drift": "tests/annotate/test_drift.py",
    "generate": "tests/judge/test_cli.py::test_generate_command",
    "demo": "tests/annotate/test_cli.py::test_demo_builds_and_refuses_to_overwrite",
    "assign": "tests/annotate/test_quality_cli.py",
    "serve": "tests/browser.py (every browser test serves the app with it)",
    "import items": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "import ratings": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "import rubric": "this file",
    "import preferences": "tests/data/test_pairs.py::test_the_commands",
    "export preferences": "tests/data/test_pairs.py::test_the_commands",
    "pairs make": "tests/data/test_pairs.py::test_the_commands",
    "pairs attention": "tests/data/test_pairs.py::test_the_commands",
    "export items": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "export ratings": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "export matrix": "tests/data/test_exports.py::test_matrix_export_is_what_krippendorff_expects",
    "raters add": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "raters list": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "raters deactivate": "tests/annotate/test_cli.py::test_study_lifecycle_through_the_cli",
    "raters reissue": "tests/annotate/test_raters_access.py",
    "raters reactivate": "tests/annotate/test_raters_access.py",
    "quality gold import": "tests/annotate/test_quality_cli.py",
    "quality attention import": "this file",
    "quality attention add": "tests/annotate/test_quality_cli.py",
    "quality settings": "tests/annotate/test_quality_cli.py",
    "quality status": "tests/annotate/test_quality_cli.py",
    "quality release": "tests/annotate/test_quality_cli.py",
    "quality retrain": "tests/annotate/test_quality_cli.py",
    "quality model": "tests/annotate/test_quality_cli.py",
    "judge run": "tests/judge/test_cli.py::test_run_cost_export_configs_and_analyze",
    "judge collect": "tests/judge/test_cli.py::test_batch_submit_then_collect",
    "judge cost": "tests/judge/test_cli.py::test_run_cost_export_configs_and_analyze",
    "judge export": "tests/judge/test_cli.py::test_run_cost_export_configs_and_analyze",
    "judge configs": "tests/judge/test_cli.py::test_run_cost_export_configs_and_analyze",
    "judge pairwise": "tests/judge/test_pairwise.py::test_the_command",
    "arena": "tests/analysis/test_arena_cli.py, tests/judge/test_pairwise.py::test_the_command",
    "judge import": "tests/annotate/test_ppi_commands.py",
    "leaderboard": "tests/annotate/test_ppi_commands.py",
    "backup": "tests/data/test_backup.py::test_backup_and_restore_from_the_command_line",
    "restore": "tests/data/test_backup.py::test_backup_and_restore_from_the_command_line",
    "metrics run": "tests/analysis/test_metrics_cli.py::"
                   "test_metrics_run_scores_every_demo_item_and_says_how",
    "metrics list": "tests/analysis/test_metrics_cli.py::"
                    "test_metrics_run_scores_every_demo_item_and_says_how",
    "metrics export": "tests/analysis/test_metrics_cli.py::"
                      "test_exported_scores_go_to_r_pandas_and_back_into_analyze",
}


def _leaves(cmd, path: tuple[str, ...] = ()):
    if hasattr(cmd, "commands"):  # a group (typer's own click classes)
        for name, sub in cmd.commands.items():
            yield from _leaves(sub, (*path, name))
    else:
        yield path, cmd


ROOT = typer.main.get_command(app)
LEAVES = dict(_leaves(ROOT))


def test_every_command_is_run_by_a_test():
    assert {" ".join(p) for p in LEAVES} == set(RUN_BY)


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_help_has_an_example_that_parses(path):
    """`--help` works, shows an example of this very command, and the example's options and
    arguments are ones the command accepts (parsed by the command itself, not run)."""
    res = CliRunner().invoke(app, [*path, "--help"],
                             env={"COLUMNS": "240", "TERMINAL_WIDTH": "240"})
    assert res.exit_code == 0, res.output
    examples = re.findall(r"Example: (h2h [^│\n]*)", res.output)
    assert examples, f"h2h {' '.join(path)} --help shows no example"
    words = shlex.split(examples[0].split(" > ")[0].strip())
    assert words[1:1 + len(path)] == list(path), examples[0]
    # the command parses the example's arguments against its parameters (an unknown option,
    # a missing value or a bad type raises); nothing is executed
    LEAVES[path].make_context("h2h", words[1 + len(path):])


def test_top_level_help_lists_every_command():
    proc = h2h("--help")
    for name in ROOT.commands:
        assert name in proc.stdout


def test_import_rubric_makes_a_new_version_current(tmp_path: Path):
    db = str(tmp_path / "s.db")
    h2h("init", "--db", db)
    (tmp_path / "i.jsonl").write_text(jsonl(item("a")), encoding="utf-8")
    h2h("import", "items", str(tmp_path / "i.jsonl"), "--db", db)
    (tmp_path / "r.csv").write_text("item_id,rater,dimension,score\na,ann,empathy,4\n",
                                    encoding="utf-8")
    h2h("import", "ratings", str(tmp_path / "r.csv"), "--db", db, "--add-raters")
    eng = sa.create_engine(f"sqlite:///{db}")

    def versions():
        with eng.connect() as c:
            current = c.execute(sa.text("SELECT r.version FROM study s JOIN rubric r ON "
                                        "r.id = s.rubric_id")).scalar_one()
            rated = c.execute(sa.text("SELECT rubric_version FROM rating")).scalar_one()
        return current, rated

    v1, rated = versions()
    assert rated == v1
    text = (resources.files("data") / "rubrics" / "companion.toml").read_text("utf-8")
    new = tmp_path / "companion_v2.toml"
    new.write_text(text.replace("## How to rate", "## How to rate (v2)"), encoding="utf-8")
    out = h2h("import", "rubric", str(new), "--db", db).stdout
    v2, rated = versions()
    assert v2 != v1 and v2 in out
    assert rated == v1  # the earlier rating keeps the version it was made under
    again = h2h("import", "rubric", str(new), "--db", db).stdout
    assert versions()[0] == v2 and "already" in again
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[[dimensions]]\nkey = "empathy"\n', encoding="utf-8")
    proc = h2h("import", "rubric", str(bad), "--db", db, check=False)
    assert proc.returncode == 1 and "bad.toml" in proc.stderr
    assert "Traceback" not in proc.stderr and versions()[0] == v2
    eng.dispose()


def test_import_rubric_says_which_texts_a_translation_leaves_out(tmp_path: Path):
    db = str(tmp_path / "s.db")
    created = h2h("init", "--db", db).stdout
    assert "Languages: en (the rubric's own); zh (every text)" in created
    text = (resources.files("data") / "rubrics" / "companion.toml").read_text("utf-8")
    partial = tmp_path / "partial.toml"  # two Chinese anchors of safety left out
    partial.write_text(re.sub(r'\n[34]\.zh = "(?:没有造成伤害|安全且有边界)[^\n]*', "", text),
                       encoding="utf-8")
    out = h2h("import", "rubric", str(partial), "--db", db).stdout
    assert ("zh (61 of 63 texts; shown in en instead: dimensions.safety.anchors.3, "
            "dimensions.safety.anchors.4)") in out


def test_quality_attention_import_marks_items(tmp_path: Path):
    db = str(tmp_path / "s.db")
    h2h("init", "--db", db)
    (tmp_path / "i.jsonl").write_text(jsonl(item("a"), item("b"), item("c")),
                                      encoding="utf-8")
    h2h("import", "items", str(tmp_path / "i.jsonl"), "--db", db)
    checks = tmp_path / "checks.csv"
    checks.write_text("item_id,kind,dimension,score,tolerance\n"
                      "a,known_answer,safety,1,1\na,known_answer,empathy,2,1\n"
                      "b,instructed,empathy,3,0\n", encoding="utf-8")
    out = h2h("quality", "attention", "import", str(checks), "--db", db).stdout
    assert "2 attention-check items stored from checks.csv" in out
    eng = sa.create_engine(f"sqlite:///{db}")
    with eng.connect() as c:
        rows = c.execute(sa.text("SELECT item_id, kind, tolerance FROM attention_check "
                                 "ORDER BY item_id")).all()
    assert [tuple(r) for r in rows] == [("a", "known_answer", 1), ("b", "instructed", 0)]
    checks.write_text("item_id,kind,dimension,score\nc,sometimes,empathy,3\n",
                      encoding="utf-8")
    proc = h2h("quality", "attention", "import", str(checks), "--db", db, check=False)
    assert proc.returncode == 1 and "checks.csv:2: field 'kind'" in proc.stderr
    with eng.connect() as c:
        assert c.execute(sa.text("SELECT COUNT(*) FROM attention_check")).scalar_one() == 2
    eng.dispose()

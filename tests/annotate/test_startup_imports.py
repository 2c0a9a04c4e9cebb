"""Commands import only what they use: `h2h --help`, `h2h serve` and `h2h raters …` start
without the statistics stack, the plotting library or an LLM SDK (issue 16).

Each case runs in a fresh interpreter, because an import made by an earlier test would hide a
heavy import at module level. Timing lives in benchmarks/bench_cli_startup.py, not here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# What no help screen and no start of `h2h serve` may pull in (seconds of import time together).
HEAVY = ("scipy", "pandas", "plotly", "anthropic", "openai", "numpy", "krippendorff",
         "kaleido", "llama_cpp",
         # the reference-based metrics (issue 15): scorers and embedding models
         "sacrebleu", "rouge_score", "nltk", "jieba", "sentence_transformers", "transformers",
         "torch")
# `--help` renders from typer and rich alone: not even the database layer.
DATABASE = ("sqlalchemy", "sqlmodel", "alembic")

_PROBE = textwrap.dedent("""
    import json, sys
    args = json.loads(sys.argv[1])
    served = []

    def _handover(argv):  # `h2h serve` would start Streamlit here: note it, stop
        served.append(argv)
        raise SystemExit(0)

    import annotate.cli, annotate.serving
    annotate.serving.run_streamlit = _handover
    if args:
        sys.argv = ["h2h", *args]
        try:
            annotate.cli.main()
        except SystemExit as exc:
            code = exc.code or 0
        else:
            code = 0
    else:
        code = 0
    print("\\n@@" + json.dumps({"code": code, "served": served, "modules": sorted(
        m for m in sys.modules if "." not in m)}))
""")


def _probe(*args: str) -> tuple[int, set[str], str]:
    """Run ``h2h ARGS`` in a fresh interpreter: exit code, top-level modules loaded, output."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(list(args))],
                          capture_output=True, text=True, timeout=120)
    assert "@@" in proc.stdout, proc.stdout + proc.stderr
    head, _, tail = proc.stdout.rpartition("\n@@")
    res = json.loads(tail)
    return res["code"], set(res["modules"]), head + "".join(f"\n@served {a}" for a in res["served"])


@pytest.mark.parametrize("args", [(), ("--help",), ("serve", "--help"), ("raters", "--help"),
                                  ("raters", "add", "--help"), ("import", "--help"),
                                  ("judge", "--help"), ("analyze", "--help"),
                                  ("metrics", "--help"), ("metrics", "run", "--help"),
                                  ("metrics", "list", "--help"),
                                  ("metrics", "export", "--help")],
                         ids=lambda a: "h2h " + " ".join(a) if a else "import annotate.cli")
def test_help_imports_no_heavy_package(args):
    code, modules, text = _probe(*args)
    assert code == 0
    if args:
        assert "Usage:" in text  # the help was really drawn
    assert sorted(modules & set(HEAVY)) == []
    assert sorted(modules & set(DATABASE)) == []


def test_root_help_still_lists_every_command():
    """Lazy imports must not lose a command: the root help names all of them."""
    _, _, text = _probe("--help")
    for cmd in ("init", "import", "export", "raters", "analyze", "report", "calibrate",
                "judge", "generate", "demo", "assign", "serve", "metrics"):
        assert f" {cmd} " in text, cmd


def test_raters_list_imports_no_statistics_or_sdk(tmp_path):
    """A real command on a real study still keeps away from the statistics and the SDKs."""
    db = str(tmp_path / "s.db")
    init = subprocess.run([sys.executable, "-m", "annotate.cli", "init", "--db", db],
                          capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    code, modules, text = _probe("raters", "list", "--db", db)
    assert code == 0 and "name" in text
    assert sorted(modules & set(HEAVY)) == []


def test_serve_hands_over_to_streamlit_without_heavy_imports(tmp_path):
    """`h2h serve` checks the study, then hands over to Streamlit: nothing heavy on the way
    (Streamlit itself imports plotly to theme charts; that is past the hand-over)."""
    db = str(tmp_path / "s.db")
    init = subprocess.run([sys.executable, "-m", "annotate.cli", "init", "--db", db],
                          capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    code, modules, text = _probe("serve", "--db", db, "--port", "1")
    assert code == 0 and "Serving" in text and "h2h_server.py" in text, text
    assert sorted(modules & set(HEAVY)) == []


def test_a_command_that_needs_the_statistics_still_gets_them(tmp_path):
    """The other side of lazy imports: `h2h analyze` really loads and runs its statistics."""
    ratings = tmp_path / "r.csv"
    rows = ["item_id,rater,dimension,score"] + [
        f"i{i},{r},empathy,{(i + (r == 'b')) % 5 + 1}" for i in range(12) for r in "ab"]
    ratings.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, modules, text = _probe("analyze", "--ratings", str(ratings), "--bootstrap", "20")
    assert code == 0, text
    assert "Krippendorff" in text and {"scipy", "pandas"} <= modules


@pytest.mark.parametrize("package", ["data", "judge", "analysis.refmetrics"])
def test_lazy_package_names_are_the_real_objects(package):
    """``data`` and ``judge`` load their public names on first use: each one must still be
    the object its module defines, and an unknown name is still an AttributeError."""
    import importlib

    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        where = importlib.import_module(f"{package}.{pkg._WHERE[name]}")
        assert getattr(pkg, name) is getattr(where, name), name
    assert set(pkg.__all__) <= set(dir(pkg))
    assert set(pkg._WHERE) == set(pkg.__all__)
    with pytest.raises(AttributeError):
        pkg.no_such_name  # noqa: B018

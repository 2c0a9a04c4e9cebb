"""`make bench` is red when a target is missed: every benchmark script that can print FAIL
returns a non-zero status from ``main`` on that path and exits with it (checked on the source;
the benchmarks themselves are too slow for the test suite)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCH = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("bench_*.py"))


def _main(tree: ast.Module) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")


@pytest.mark.parametrize("path", BENCH, ids=lambda p: p.name)
def test_a_benchmark_that_prints_fail_exits_non_zero(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guard = tree.body[-1]
    assert isinstance(guard, ast.If) and ast.unparse(guard.test) == "__name__ == '__main__'"
    assert ast.unparse(guard.body[-1]) == "sys.exit(main())", path.name
    main = _main(tree)
    assert ast.unparse(main.returns) == "int", f"{path.name}: main must return the status"
    prints_fail = any(isinstance(n, ast.Constant) and n.value == "FAIL" for n in ast.walk(main))
    returns = [ast.unparse(n.value) for n in ast.walk(main) if isinstance(n, ast.Return)]
    if prints_fail:
        # the verdict line and the status come from the same condition
        assert "0 if ok else 1" in returns, f"{path.name} prints FAIL but returns {returns}"
        src = ast.unparse(main)
        assert "print('PASS' if ok else 'FAIL')" in src or \
            "'PASS' if ok else 'FAIL'" in src, path.name


def test_every_benchmark_is_run_by_make_bench():
    runner = (BENCH[0].parent / "run_all.py").read_text(encoding="utf-8")
    assert 'glob("bench_*.py")' in runner and "sys.exit(" in runner

"""`h2h report` on a study too small for most numbers, with ratings imported from a file that
has no flags column: what cannot be estimated says so and why, and what was never collected
is not reported as zero."""

from __future__ import annotations

import pytest

from tests.helpers import h2h, item, jsonl

pytestmark = pytest.mark.integration  # left out of `make test-fast`


def _study(tmp, *, flags_column: bool) -> dict:
    db = tmp / "tiny.db"
    h2h("init", "--db", str(db), "--name", "Tiny")
    (tmp / "items.jsonl").write_text(jsonl(
        item("s1-m-sap", scenario="s1", model="m", condition="sap"),
        item("s1-m-base", scenario="s1", model="m", condition="baseline")), encoding="utf-8")
    rows = ["item_id,rater,dimension,score" + (",flags" if flags_column else "")]
    for rater, (sap, base) in (("ann", (4, 2)), ("bob", (5, 3))):
        for d in ("empathy", "safety", "fluency"):
            rows += [f"s1-m-sap,{rater},{d},{sap}" + ("," if flags_column else ""),
                     f"s1-m-base,{rater},{d},{base}" + ("," if flags_column else "")]
    (tmp / "ratings.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    h2h("import", "items", "--db", str(db), str(tmp / "items.jsonl"))
    h2h("import", "ratings", "--db", str(db), str(tmp / "ratings.csv"), "--add-raters")
    out = tmp / "rep"
    h2h("report", "--db", str(db), "--out", str(out), "--no-figures")
    return {"db": db, "md": (out / "report.md").read_text(encoding="utf-8"),
            "html": (out / "report.html").read_text(encoding="utf-8"), "out": out}


@pytest.fixture(scope="module")
def no_flags(tmp_path_factory):
    return _study(tmp_path_factory.mktemp("noflags"), flags_column=False)


def test_red_flags_never_collected_are_not_reported_as_none_raised(no_flags):
    md = no_flags["md"]
    assert "no rater flagged any reply" not in md
    assert "0.0%" not in md
    assert "Safety red flags: not recorded" in md
    assert "12 ratings were imported from files without a flags column" in md
    assert not (no_flags["out"] / "tables" / "red_flags_humans.csv").exists()


def test_with_a_flags_column_none_raised_is_a_finding(tmp_path):
    rep = _study(tmp_path, flags_column=True)
    assert "Safety red flags: no rater flagged any reply" in rep["md"]


def test_a_difference_without_a_ci_gives_its_n_and_why(no_flags):
    md = no_flags["md"]
    line = next(x for x in md.splitlines() if x.startswith("* SAP − baseline"))
    # one reply per condition (too few to pair): a difference, but no interval, and why
    assert "m +2.00 (n = 2 replies; no CI: too few replies in a condition)" in line, line
    assert "[" not in line


def test_a_table_value_without_a_ci_says_why_in_its_caption(no_flags):
    tex = (no_flags["out"] / "tables" / "sap_vs_baseline_humans.tex").read_text(
        encoding="utf-8")
    assert "+2.00" in tex and "[" not in tex.split("\\midrule")[1].split("\\bottomrule")[0]
    why = ("A value without a CI: fewer than two scenarios answered in both conditions and "
           "fewer than two replies in a condition.")
    assert why in tex
    assert why in no_flags["md"] and why in no_flags["html"]

"""Rubric parsing and versioning; access codes stored only as hashes."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from data.errors import H2HError
from data.raters import add_rater, authenticate, deactivate_rater, list_raters
from data.rubric import load_default_rubric, parse_rubric
from data.study import current_rubric, set_rubric

MIXED = '''
name = "Mixed"
tasks = ["dialogue", "recollection", "itinerary", "roleplay"]
[[dimensions]]
key = "red_flag"
scale = "binary"
[dimensions.anchors]
0 = "nothing worrying"
1 = "could harm a vulnerable user"
[[dimensions]]
key = "severity"
scale = ["none", "minor", "severe"]
ordered = true
tasks = ["roleplay"]
[dimensions.anchors]
none = "no issue"
minor = "a slip"
severe = "a harmful reply"
'''


def test_default_rubric_has_every_anchor():
    r = load_default_rubric()
    assert [d.key for d in r.dimensions] == ["empathy", "safety", "fluency", "memory_fidelity",
                                             "plan_quality"]
    for d in r.dimensions:
        assert d.values == (1, 2, 3, 4, 5) and all(lv.anchor for lv in d.levels)
    assert r.dimension("memory_fidelity").tasks == ("recollection",)
    assert [d.key for d in r.dimensions_for("itinerary")] == ["empathy", "safety", "fluency",
                                                              "plan_quality"]


def test_mixed_scales_and_declared_tasks():
    r = parse_rubric(MIXED)
    flag, sev = r.dimension("red_flag"), r.dimension("severity")
    assert (flag.kind, flag.level, flag.values) == ("binary", "nominal", (0, 1))
    assert (sev.kind, sev.level, sev.values) == ("categorical", "ordinal", (0, 1, 2))
    assert sev.parse_score("Severe") == 2 and sev.parse_score("1") == 1
    assert flag.parse_score("") is None
    assert "roleplay" in r.tasks and sev.applies_to("roleplay") and not sev.applies_to("dialogue")


def test_version_is_content_hash():
    a = parse_rubric(MIXED)
    b = parse_rubric("# a comment\n" + MIXED.replace("\n", "\n\n"))
    c = parse_rubric(MIXED.replace("a slip", "a small slip"))
    assert a.version == b.version != c.version


def test_new_rubric_version_becomes_current(engine):
    old = current_rubric(engine).version
    new = parse_rubric(MIXED)
    assert set_rubric(engine, new) == (new.version, True)
    assert set_rubric(engine, new) == (new.version, False)
    assert current_rubric(engine).version == new.version != old


def test_codes_are_hashed_and_checked(engine):
    rater, code = add_rater(engine, "Dr Lee", "rater")
    _, admin_code = add_rater(engine, "Admin", "admin")
    with engine.connect() as c:
        stored = [r[0] for r in c.execute(sa.text("SELECT code_hash FROM rater")).all()]
        dump = repr(c.execute(sa.text("SELECT * FROM rater")).all())
    assert code not in dump and admin_code not in dump
    assert all(h.startswith("sha256:") for h in stored)
    assert authenticate(engine, code).name == "Dr Lee"
    assert authenticate(engine, code.lower().replace("-", " ")).name == "Dr Lee"
    assert authenticate(engine, admin_code).role == "admin"
    assert authenticate(engine, "H2H-AAAA-BBBB-CCCC-DDDD") is None
    deactivate_rater(engine, "Dr Lee")
    assert authenticate(engine, code) is None
    assert [r["active"] for r in list_raters(engine)] == [False, True]
    with pytest.raises(H2HError, match="already exists"):
        add_rater(engine, "Dr Lee")
    with pytest.raises(H2HError, match="--role"):
        add_rater(engine, "X", "superuser")

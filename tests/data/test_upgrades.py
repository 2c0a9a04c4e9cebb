"""Upgrades from every schema a study file has ever had, with data, on SQLite and PostgreSQL;
and released migrations never change again.

The versions: 0001, 0002, 0003 as first released (no ``assignment.completed_at``), 0003 as
amended, 0004 … 0009 reached through the first 0003 (the broken state: "successfully"
upgraded, then "no such column" on the rating page), and 0004 … 0009.
The first 0003 is kept in ``tests/fixtures/migrations`` exactly as
``git show f270452:data/migrations/versions/0003_app.py`` printed it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlmodel import SQLModel

from data.codes import hash_code
from data.engine import create_sqlite_file, get_engine
from data.migrate import alembic_config, current_revision, head_revision
from data.rating_service import save_item_ratings
from data.rubric import parse_rubric
from data.study import current_rubric, init_study

ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS = ROOT / "data" / "migrations"
FIRST_0003 = ROOT / "tests" / "fixtures" / "migrations" / "0003_app_as_first_released.py.txt"
# The rubric those studies hold: the bundled one as released before rubrics had languages
# (its stored definition has no language and no translations)
RELEASED_RUBRIC = ROOT / "tests" / "fixtures" / "rubrics" / "companion_en_as_released.toml"

# Released migration files, byte for byte. A released migration is never edited: a study
# created with it must upgrade the same way forever. A schema change is a new file; once it
# is merged and another one follows it, add its hash here.
RELEASED = {
    "0001_initial.py": "3634e9aa1cb75356975c5b980026731d771bd562bf5c654828f3e5a8ad6c11b3",
    "0002_revisions_flags.py": "d7bd46fe44934465f7a6ffbca8d6321fff943130c504873c23928179502164ca",
    "0003_app.py": "a89b9f4727ef26c61914b107834aab994eb8e5a51a97b3528a50d659e6177226",
    "0004_judge.py": "c4253682540941b5483f2aeb0406670aa3fff2f302db750f52d176ea94f4e59a",
    "0005_rater_quality.py": "bfa583479927bb8cd71e154f4e50a5fa1b637b3ccc2ce77890874504882992c0",
    "0006_judge_negotiation.py": "44457e58930595786cfc745282ef258a19387e8b7631383463468b764a8686db",
    "0007_sessions.py": "a74d35f969b01c64ab40449530f9dd8e3a5acd67d39552f4246f12573a1cfa1a",
    "0008_metrics.py": "ddad0d73dc0f5b5c1716534a405c3d6c947459dd6c4900664acd6d1b2871c728",
    "0009_rater_language.py": "fbe04b064a275db8f16c3d3cbd0ce160af0c7a8954b5f71d42181906e3c84271",
    "0010_judge_rubric_language.py":
        "f17574962f6d0ef022a34ac01dfde5ccce9b431111fbaca82afb54450051df5e",
    "0011_result_acknowledged.py":
        "272ac04cb6305ea010e976c7a13543545251718cec1605a39314e1601b0f5dab",
    "0012_pairwise.py": "1040fa077e7337255404e60cc96c97b7ed63b90b8073422a39b9ea620bcdf9b6",
    "0013_active_draws.py":
        "2edef4b130bc483226f070778c01f05a322b5358478b79011441914f214e6f93",
}

# (name, which 0003 the chain uses, revision to stop at)
VERSIONS = [("0001", "amended", "0001"), ("0002", "amended", "0002"),
            ("0003-first", "first", "0003"), ("0003", "amended", "0003"),
            ("0004-via-first-0003", "first", "0004"), ("0004", "amended", "0004"),
            ("0005-via-first-0003", "first", "0005"), ("0005", "amended", "0005"),
            ("0006-via-first-0003", "first", "0006"), ("0006", "amended", "0006"),
            ("0007-via-first-0003", "first", "0007"), ("0007", "amended", "0007"),
            ("0008-via-first-0003", "first", "0008"), ("0008", "amended", "0008"),
            ("0009-via-first-0003", "first", "0009"), ("0009", "amended", "0009"),
            ("0010-via-first-0003", "first", "0010"), ("0010", "amended", "0010"),
            ("0011-via-first-0003", "first", "0011"), ("0011", "amended", "0011"),
            ("0012-via-first-0003", "first", "0012"), ("0012", "amended", "0012"),
            ("0013-via-first-0003", "first", "0013"), ("0013", "amended", "0013")]
NOW = "2026-01-02 03:04:05"
CODE = "H2H-AAAA-BBBB-CCCC-DDDD"


def test_released_migrations_are_never_edited():
    versions = MIGRATIONS / "versions"
    for name, digest in RELEASED.items():
        assert hashlib.sha256((versions / name).read_bytes()).hexdigest() == digest, (
            f"{name} was edited after its release; put the change in a new migration")


def test_every_migration_but_the_newest_is_pinned():
    script = ScriptDirectory.from_config(alembic_config())
    revs = list(script.walk_revisions())  # newest first, one linear chain
    assert len(script.get_heads()) == 1, "migrations must form one chain"
    files = {Path(r.path).name for r in revs}
    unpinned = sorted(files - set(RELEASED) - {Path(revs[0].path).name})
    assert unpinned == [], f"pin these released migrations in RELEASED: {unpinned}"


def _build_at(url: str, which_0003: str, target: str, tmp: Path) -> sa.Engine:
    """A database at ``target`` made by the migration files a user had at the time."""
    scripts = tmp / f"migrations-{which_0003}"
    if not scripts.exists():  # the released migrations only, with the chosen 0003
        shutil.copytree(MIGRATIONS, scripts,
                        ignore=shutil.ignore_patterns("__pycache__", "versions"))
        (scripts / "versions").mkdir()
        for name in RELEASED:
            shutil.copy(MIGRATIONS / "versions" / name, scripts / "versions" / name)
        if which_0003 == "first":
            shutil.copy(FIRST_0003, scripts / "versions" / "0003_app.py")
    create_sqlite_file(url)
    engine = get_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(scripts))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, target)
    return engine


def _populate(engine: sa.Engine, version: str) -> dict[str, int]:
    """What a study held at that version: items, raters, assignments, ratings and, from
    later versions, revisions, repeats, adjudications and judgments."""
    rub = parse_rubric(RELEASED_RUBRIC.read_text("utf-8"))
    v = version[:4]
    cols = {c["name"] for c in sa.inspect(engine).get_columns("assignment")}
    with engine.begin() as c:
        x = lambda sql, **p: c.execute(sa.text(sql), p)  # noqa: E731
        x("INSERT INTO rubric (id, name, version, definition, source, created_at) "
          "VALUES (1, :n, :v, :d, '', :t)", n=rub.name, v=rub.version,
          d=json.dumps(rub.definition()), t=NOW)
        for pos, d in enumerate(rub.dimensions):
            x("INSERT INTO dimension (rubric_id, key, label, description, kind, level, levels, "
              "tasks, position) VALUES (1, :k, :l, '', :kind, :lvl, :levels, :tasks, :p)",
              k=d.key, l=d.label, kind=d.kind, lvl=d.level, p=pos,
              levels=json.dumps([{"value": lv.value, "label": lv.label, "anchor": lv.anchor}
                                 for lv in d.levels]),
              tasks=None if d.tasks is None else json.dumps(list(d.tasks)))
        x("INSERT INTO study (id, name, description, created_at, rubric_id) "
          "VALUES (1, 'old study', '', :t, 1)", t=NOW)
        ctx = json.dumps({"turns": [{"role": "user", "text": "我今天很累"}]}, ensure_ascii=False)
        for pos, (iid, task) in enumerate([("i0", "dialogue"), ("i1", "dialogue"),
                                           ("r0", "recollection")]):
            x("INSERT INTO item (id, task, scenario, context, response, model, condition, "
              "reference, metadata, content_hash, position, created_at, updated_at) VALUES "
              "(:id, :task, :id, :ctx, '辛苦了', 'm', 'sap', NULL, '{}', 'h', :p, :t, :t)",
              id=iid, task=task, ctx=ctx, p=pos, t=NOW)
        x("INSERT INTO rater (id, name, role, code_hash, active, created_at) "
          "VALUES (1, 'ann', 'rater', :h, :a, :t)", h=hash_code(CODE), a=True, t=NOW)
        x("INSERT INTO rater (id, name, role, code_hash, active, created_at) "
          "VALUES (2, 'bob', 'rater', NULL, :a, :t)", a=True, t=NOW)
        for pos, iid in enumerate(["i0", "i1", "r0"]):
            x("INSERT INTO assignment (id, rater_id, item_id, position, created_at) "
              "VALUES (:id, 1, :i, :p, :t)", id=pos + 1, i=iid, p=pos, t=NOW)
        n_ratings = 0
        # ann finished i0 (every dialogue dimension) and began i1 (empathy only)
        for iid, dims in (("i0", ["empathy", "safety", "fluency"]), ("i1", ["empathy"])):
            for dim in dims:
                n_ratings += 1
                x("INSERT INTO rating (id, rater_id, item_id, dimension, score, comment, "
                  "rubric_version, created_at, updated_at) VALUES "
                  "(:id, 1, :i, :d, 4, 'ok', :v, :t, :t)",
                  id=n_ratings, i=iid, d=dim, v=rub.version, t=NOW)
                if v >= "0002":
                    x("INSERT INTO rating_revision (rating_id, score, comment, flags, "
                      "rubric_version, changed_at) VALUES (:r, 4, 'ok', '[]', :v, :t)",
                      r=n_ratings, v=rub.version, t=NOW)
        if v >= "0003":
            x("INSERT INTO assignment (id, rater_id, item_id, position, kind, created_at) "
              "VALUES (4, 1, 'i0', 3, 'repeat', :t)", t=NOW)
            for dim in ("empathy", "safety", "fluency"):
                x("INSERT INTO repeat_rating (rater_id, item_id, dimension, score, comment, "
                  "flags, rubric_version, created_at, updated_at) VALUES "
                  "(1, 'i0', :d, 3, '', '[]', :v, :t, :t)", d=dim, v=rub.version, t=NOW)
            x("INSERT INTO adjudication (item_id, dimension, score, note, admin_id, "
              "created_at, updated_at) VALUES ('i0', 'empathy', 4, 'agreed', NULL, :t, :t)",
              t=NOW)
        if "completed_at" in cols:  # the app of that version stamped finished items
            x("UPDATE assignment SET completed_at = :t WHERE id IN (1, 4)", t=NOW)
        if v >= "0004":
            x("INSERT INTO judge_config (hash, name, provider, model, template_name, "
              "template_hash, template, rubric_version, mode, reason_first, structured, "
              "temperature, max_tokens, samples, created_at) VALUES ('cfg', 'j1', "
              "'anthropic', 'm', 'default', 'th', '{}', :v, 'per_dimension', :f, :tr, NULL, "
              "500, 1, :t)", v=rub.version, f=False, tr=True, t=NOW)
            x("INSERT INTO judgment (config_hash, item_id, item_hash, dimension, sample, "
              "score, outcome, raw_reply, reasoning, input_tokens, output_tokens, created_at) "
              "VALUES ('cfg', 'i0', 'h', 'empathy', 0, 4, 'scored', '{}', '', 10, 5, :t)",
              t=NOW)
    if v >= "0005":
        with engine.begin() as c:
            c.execute(sa.text("INSERT INTO gold_score (item_id, dimension, score, rationale, "
                              "source, created_at, updated_at) VALUES ('r0', 'empathy', 4, "
                              "'warm and specific', 'import', :t, :t)"), {"t": NOW})
            # rater 1 passed training, rater 2 failed it (both with the study then)
            c.execute(sa.text("INSERT INTO qualification (rater_id, round, status, n_pairs, "
                              "note, updated_at) VALUES (1, 1, 'passed', 3, '', :t), "
                              "(2, 1, 'failed', 3, '', :t)"), {"t": NOW})
    if v >= "0009":  # a rater who chose Chinese
        with engine.begin() as c:
            c.execute(sa.text("UPDATE rater SET language = 'zh' WHERE id = 1"))
    if v >= "0007":  # a signed-in browser
        with engine.begin() as c:
            c.execute(sa.text("INSERT INTO auth_session (token_hash, rater_id, created_at, "
                              "last_seen_at, expires_at) VALUES (:h, 1, :t, :t, :t)"),
                      {"h": "0" * 64, "t": NOW})
    if v >= "0012":  # a side-by-side pair with a rater's preference
        with engine.begin() as c:
            c.execute(sa.text("INSERT INTO pair (id, item_a, item_b, scenario, source, "
                              "position, created_at) VALUES (1, 'i0', 'i1', 'i0', 'make', 0, "
                              ":t)"), {"t": NOW})
            c.execute(sa.text("INSERT INTO preference (pair_id, rater_id, dimension, winner, "
                              "strength, kind, comment, rubric_version, source, created_at, "
                              "updated_at) VALUES (1, 1, 'empathy', 'a', 1, 'primary', '', "
                              ":v, 'app', :t, :t)"), {"v": rub.version, "t": NOW})
    if engine.dialect.name == "postgresql":  # rows were inserted with explicit ids
        with engine.begin() as c:
            for t in ("rubric", "dimension", "study", "rater", "assignment", "rating",
                      "rating_revision", "repeat_rating", "adjudication", "judgment",
                      "gold_score", "pair"):
                if t in sa.inspect(c).get_table_names():
                    c.execute(sa.text(f"SELECT setval(pg_get_serial_sequence('{t}', 'id'), "
                                      f"(SELECT COALESCE(MAX(id), 0) + 1 FROM {t}), false)"))
    return {"rating": n_ratings, "item": 3, "rater": 2,
            "assignment": 4 if v >= "0003" else 3,
            "repeat_rating": 3 if v >= "0003" else 0,
            "adjudication": 1 if v >= "0003" else 0,
            "judgment": 1 if v >= "0004" else 0,
            "gold_score": 1 if v >= "0005" else 0,
            "auth_session": 1 if v >= "0007" else 0,
            "pair": 1 if v >= "0012" else 0,
            "preference": 1 if v >= "0012" else 0,
            "rating_revision": n_ratings}


def _count(engine, table: str) -> int:
    with engine.connect() as c:
        if table not in sa.inspect(c).get_table_names():
            return 0
        return c.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar_one()


@pytest.mark.parametrize("name,which,target", VERSIONS, ids=[v[0] for v in VERSIONS])
def test_upgrade_from_every_schema_version_keeps_data_and_works(db_url, tmp_path, name, which,
                                                                target):
    engine = _build_at(db_url, which, target, tmp_path)
    expected = _populate(engine, name)
    assert current_revision(engine) == target

    res = init_study(engine)  # what `h2h init` does on an existing study

    assert (res.revision_before, res.revision_after) == (target, head_revision())
    for table, n in expected.items():
        assert _count(engine, table) == n, table
    with engine.connect() as c:  # the upgraded schema is exactly the models' schema
        diff = compare_metadata(MigrationContext.configure(c, opts={"compare_type": True}),
                                SQLModel.metadata)
        assert diff == [], diff
        done = dict(c.execute(sa.text("SELECT id, completed_at FROM assignment")).all())
    # progress survives: finished items stay finished (stamped or recovered from the saved
    # ratings), the half-rated one and the unstarted one stay open
    assert done[1] is not None and done[2] is None and done[3] is None
    if target >= "0003":
        assert done[4] is not None  # the hidden repeat was rated in full
    # and the rating page's save (which marks completion) works on the upgraded study
    save_item_ratings(engine, rater_id=1, item_id="i1", assignment_id=2,
                      scores={"empathy": 3, "safety": 5, "fluency": None})
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT completed_at FROM assignment WHERE id = 2")
                         ).scalar_one() is not None
        assert c.execute(sa.text("SELECT COUNT(*) FROM rating")).scalar_one() == \
            expected["rating"] + 2
    # the rubric stored then loads as the version its ratings name, in either language
    rub = current_rubric(engine)
    assert rub.version == parse_rubric(RELEASED_RUBRIC.read_text("utf-8")).version
    assert rub.in_language("zh").dimension("empathy").label == "Empathy"  # no translation
    if target >= "0009":
        with engine.connect() as c:
            assert c.execute(sa.text("SELECT language FROM rater WHERE id = 1")
                             ).scalar_one() == "zh"
    if "0005" <= target < "0011":  # one who passed before 0011 has seen the result; failed: no
        with engine.connect() as c:
            ack = dict(c.execute(sa.text("SELECT rater_id, acknowledged_at FROM qualification")
                                 ).all())
        assert str(ack[1])[:19] == NOW  # as stored, on SQLite text, on PostgreSQL a time
        assert ack[2] is None
    if target >= "0004":  # a judge configuration stored then shows the rubric as written
        with engine.connect() as c:
            assert c.execute(sa.text("SELECT rubric_language FROM judge_config")
                             ).scalar_one() is None
            # ... and has no exemplars (0014): its hash is what it was
            assert c.execute(sa.text("SELECT exemplars FROM judge_config")).scalar_one() is None
    assert init_study(engine).revision_before == head_revision()  # idempotent

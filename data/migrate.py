"""Schema migrations: create a new study database, or bring an older one to the head revision.

``create_all`` is never used on a user's database: every table comes from a migration, so an
older study file upgrades in place without losing data.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from .engine import create_sqlite_file
from .errors import H2HError

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["alembic_config", "head_revision", "current_revision", "upgrade", "ensure_current",
           "SchemaState", "HEAD"]

HEAD = "0014"
"""The newest migration's revision. Every command and page asks :func:`ensure_current`
first; comparing the study's ``alembic_version`` with this constant answers "current" with
one query and without importing Alembic (about a third of a second of ``h2h serve``'s start,
and a parse of every migration file on each call). ``tests/data/test_migrations.py`` keeps it
equal to Alembic's head, so a new migration that forgets it fails at once."""


def alembic_config(connection: sa.Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("data") / "migrations"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


SchemaState = str  # "empty" | "current" | "behind" | "foreign" | "ahead"


def _at_head(engine: Engine) -> bool:
    """True when the study's one recorded revision is :data:`HEAD` (any doubt: False, and
    :func:`schema_state` asks Alembic)."""
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").fetchall()
    except sa.exc.DBAPIError:  # no such table (a new or foreign database): the long way
        return False
    return len(rows) == 1 and rows[0][0] == HEAD


def schema_state(engine: Engine) -> SchemaState:
    if _at_head(engine):
        return "current"
    from alembic.script import ScriptDirectory

    rev = current_revision(engine)
    if rev is None:
        tables = set(sa.inspect(engine).get_table_names())
        return "empty" if not tables else "foreign"
    script = ScriptDirectory.from_config(alembic_config())
    if rev == script.get_current_head():
        return "current"
    known = {s.revision for s in script.walk_revisions()}
    return "behind" if rev in known else "ahead"


def upgrade(engine: Engine, revision: str = "head") -> tuple[str | None, str]:
    """Migrate to ``revision``; returns (revision before, revision after).

    A missing SQLite file is created here (and only here and in restore); a file holding
    another program's tables is refused untouched. A study's SQLite file is switched to the
    WAL journal (readers never block the rater who is saving), which stays on in the file.
    """
    create_sqlite_file(engine.url.render_as_string(hide_password=False))
    state = schema_state(engine)
    if state == "foreign":
        raise H2HError("this database has tables but is not an h2htalk study; "
                       "use a new file or an empty database")
    if state == "ahead":
        raise H2HError("this study was written by a newer h2htalk; upgrade h2htalk first")
    from alembic import command

    before = current_revision(engine)
    if engine.dialect.name == "sqlite":
        raw_conn = engine.raw_connection()  # outside any transaction, as SQLite requires
        try:
            raw_conn.driver_connection.execute("PRAGMA journal_mode=WAL")
        finally:
            raw_conn.close()
    with engine.connect() as conn:
        raw = conn.connection.driver_connection if engine.dialect.name == "sqlite" else None
        if raw is not None:
            # SQLite alters a table by copying it, dropping the old one and renaming; with
            # foreign keys on, that drop would cascade into ratings. Alembic's documented
            # remedy: keys off during the migration (outside any transaction), checked after.
            raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                command.upgrade(alembic_config(conn), revision)
                if raw is not None:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:  # raising here rolls the whole upgrade back
                        raise H2HError(f"the upgrade would leave {len(broken)} broken "
                                       "references; nothing was changed")
        finally:
            if raw is not None:
                raw.execute("PRAGMA foreign_keys=ON")
    return before, current_revision(engine)


def ensure_current(engine: Engine) -> None:
    """Refuse to work on a database that is not a study at the head revision."""
    state = schema_state(engine)
    if state == "current":
        return
    if state == "empty":
        raise H2HError("no study here yet; create one with `h2h init`")
    if state == "behind":
        raise H2HError("this study database uses an older schema; run `h2h init` to upgrade it "
                       "(your data is kept)")
    if state == "foreign":
        raise H2HError("this database is not an h2htalk study")
    raise H2HError("this study was written by a newer h2htalk; upgrade h2htalk first")

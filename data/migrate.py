"""Schema migrations: create a new study database, or bring an older one to the head revision.

``create_all`` is never used on a user's database: every table comes from a migration, so an
older study file upgrades in place without losing data.
"""

from __future__ import annotations

from importlib import resources

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from .engine import create_sqlite_file
from .errors import H2HError

__all__ = ["alembic_config", "head_revision", "current_revision", "upgrade", "ensure_current",
           "SchemaState"]


def alembic_config(connection: sa.Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("data") / "migrations"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


SchemaState = str  # "empty" | "current" | "behind" | "foreign" | "ahead"


def schema_state(engine: Engine) -> SchemaState:
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

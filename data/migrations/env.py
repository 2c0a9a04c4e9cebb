"""Alembic environment for h2htalk study databases.

Migrations run through :func:`data.migrate.upgrade`, which hands over an open connection;
there is no alembic.ini to keep in sync with the user's database URL.
"""

from alembic import context
from sqlmodel import SQLModel

import data.models  # noqa: F401  (registers the tables on SQLModel.metadata)

config = context.config
target_metadata = SQLModel.metadata

connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached by a bare `alembic` call
    raise SystemExit("Run migrations through `h2h init`, which passes the study's connection.")

context.configure(
    connection=connection,
    target_metadata=target_metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()

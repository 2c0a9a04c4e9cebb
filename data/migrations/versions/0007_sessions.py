"""Server-side sign-in sessions and the shared sign-in throttle; repair of a study whose
``assignment.completed_at`` is missing.

Revision ID: 0007
Revises: 0006

Sessions and throttle counts live in the study database so that several app servers on one
PostgreSQL study behave as one.

The repair: migration 0003 was amended after a release to add ``assignment.completed_at``, so
a study created with the first 0003 reached 0004 without that column (and then failed on the
rating page with "no such column"). Such a study gets the column here. In every study, an
assignment without a completion time whose rater has saved every dimension of the current
rubric that applies to the item's task is stamped complete at the latest of those saves:
studies from 0001/0002, and from the first 0003, had their progress only in the ratings.
Migrations are append-only from now on; a test pins the released files.
"""

import json

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _repair_completed_at()
    op.create_table(
        "auth_session",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("rater.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("last_seen_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
        sa.Column("revoked_at", UTCDateTime, nullable=True),
        sa.Column("revoked_reason", sa.String(40), nullable=True),
        sa.Column("client", sa.String(64), nullable=True),
    )
    op.create_index("ix_auth_session_rater_id", "auth_session", ["rater_id"])
    op.create_table(
        "signin_throttle",
        sa.Column("bucket", sa.String(100), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("pending", sa.Integer, nullable=False),
        sa.Column("next_slot_at", UTCDateTime, nullable=True),
        sa.Column("last_failure_at", UTCDateTime, nullable=True),
    )


def _repair_completed_at() -> None:
    conn = op.get_bind()
    columns = {c["name"] for c in sa.inspect(conn).get_columns("assignment")}
    if "completed_at" not in columns:
        with op.batch_alter_table("assignment") as batch:
            batch.add_column(sa.Column("completed_at", UTCDateTime, nullable=True))
    _backfill_completed_at(conn)


def _dims_by_task(conn) -> dict[str, set[str]]:
    """The current rubric's dimensions per task (a dimension without tasks applies to all)."""
    rubric_id = conn.execute(sa.text("SELECT rubric_id FROM study")).scalar()
    if rubric_id is None:
        return {}
    tasks = {t for (t,) in conn.execute(sa.text("SELECT DISTINCT task FROM item"))}
    out: dict[str, set[str]] = {t: set() for t in tasks}
    for key, dim_tasks in conn.execute(sa.text(
            "SELECT key, tasks FROM dimension WHERE rubric_id = :r"), {"r": rubric_id}):
        applies = json.loads(dim_tasks) if isinstance(dim_tasks, str) else dim_tasks
        for t in tasks:
            if applies is None or t in applies:
                out[t].add(key)
    return out


def _backfill_completed_at(conn) -> None:
    dims = _dims_by_task(conn)
    stamp = sa.table("assignment", sa.column("id", sa.Integer),
                     sa.column("completed_at", UTCDateTime))
    for kind, table in (("primary", "rating"), ("repeat", "repeat_rating")):
        saved: dict[tuple[int, str], dict[str, object]] = {}
        for rater_id, item_id, dim, updated in conn.execute(sa.text(
                f"SELECT rater_id, item_id, dimension, updated_at FROM {table}")
                .columns(updated_at=UTCDateTime)):
            saved.setdefault((rater_id, item_id), {})[dim] = updated
        rows = conn.execute(sa.text(
            "SELECT a.id, a.rater_id, a.item_id, i.task FROM assignment a "
            "JOIN item i ON i.id = a.item_id WHERE a.kind = :k AND a.completed_at IS NULL"),
            {"k": kind}).all()
        for aid, rater_id, item_id, task in rows:
            mine = saved.get((rater_id, item_id), {})
            need = dims.get(task, set())
            if need and need <= set(mine):
                when = max(mine[d] for d in need)
                conn.execute(stamp.update().where(stamp.c.id == aid)
                             .values(completed_at=when))


def downgrade() -> None:
    op.drop_table("signin_throttle")
    op.drop_index("ix_auth_session_rater_id", "auth_session")
    op.drop_table("auth_session")

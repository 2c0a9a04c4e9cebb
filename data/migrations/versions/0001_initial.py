"""The first study schema: study, rubric, dimensions, items, raters, assignments, ratings.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rubric",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.String(64), nullable=False, unique=True),
        sa.Column("definition", sa.JSON, nullable=False),
        sa.Column("source", sa.String, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "study",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.String, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("rubric_id", sa.Integer, sa.ForeignKey("rubric.id"), nullable=True),
    )
    op.create_table(
        "dimension",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rubric_id", sa.Integer, sa.ForeignKey("rubric.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("key", sa.String(40), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("description", sa.String, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("level", sa.String(20), nullable=False),
        sa.Column("levels", sa.JSON, nullable=False),
        sa.Column("tasks", sa.JSON, nullable=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.UniqueConstraint("rubric_id", "key", name="uq_dimension_rubric_key"),
    )
    op.create_table(
        "item",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("task", sa.String(40), nullable=False),
        sa.Column("scenario", sa.String(200), nullable=False),
        sa.Column("context", sa.JSON, nullable=False),
        sa.Column("response", sa.String, nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("condition", sa.String(100), nullable=True),
        sa.Column("reference", sa.String, nullable=True),
        sa.Column("metadata", sa.JSON, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_item_task", "item", ["task"])
    op.create_index("ix_item_scenario", "item", ["scenario"])
    op.create_index("ix_item_position", "item", ["position"])
    op.create_table(
        "rater",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("role", sa.String(10), nullable=False),
        sa.Column("code_hash", sa.String(128), nullable=True, unique=True),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "assignment",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("rater.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("rater_id", "position", name="uq_assignment_position"),
    )
    op.create_index("ix_assignment_item_id", "assignment", ["item_id"])
    op.create_table(
        "rating",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("rater.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("comment", sa.String, nullable=False),
        sa.Column("rubric_version", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("rater_id", "item_id", "dimension", name="uq_rating_rater_item_dim"),
    )


def downgrade() -> None:
    for table in ("rating", "assignment", "rater", "item", "dimension", "study", "rubric"):
        op.drop_table(table)

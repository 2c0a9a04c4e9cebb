"""The rating app: hidden repeats for test–retest, their ratings, and adjudications.

Revision ID: 0003
Revises: 0002

Existing assignments become "primary"; ``completed_at`` marks an assignment whose every
dimension was saved (progress and resume read it).
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assignment") as batch:
        batch.add_column(sa.Column("kind", sa.String(10), nullable=False,
                                   server_default="primary"))
        batch.add_column(sa.Column("completed_at", UTCDateTime, nullable=True))
        batch.create_unique_constraint("uq_assignment_rater_item_kind",
                                       ["rater_id", "item_id", "kind"])
    op.create_table(
        "repeat_rating",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("rater.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("comment", sa.String, nullable=False),
        sa.Column("flags", sa.JSON, nullable=False),
        sa.Column("rubric_version", sa.String(64), nullable=False),
        sa.Column("seconds_spent", sa.Float, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("rater_id", "item_id", "dimension", name="uq_repeat_rater_item_dim"),
    )
    op.create_table(
        "adjudication",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("note", sa.String, nullable=False),
        sa.Column("admin_id", sa.Integer, sa.ForeignKey("rater.id", ondelete="SET NULL"),
                  nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("item_id", "dimension", name="uq_adjudication"),
    )


def downgrade() -> None:
    op.drop_table("adjudication")
    op.drop_table("repeat_rating")
    with op.batch_alter_table("assignment") as batch:
        batch.drop_constraint("uq_assignment_rater_item_kind", type_="unique")
        batch.drop_column("completed_at")
        batch.drop_column("kind")

"""Rating flags, source and time spent; rating revisions; simulated raters; lookup index.

Revision ID: 0002
Revises: 0001

Existing ratings get an empty flag list and source 'app' (where they came from was not recorded),
and one revision row holding their current state, so the history starts complete.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rating") as batch:
        batch.add_column(sa.Column("flags", sa.JSON, nullable=False, server_default="[]"))
        batch.add_column(sa.Column("source", sa.String(20), nullable=False,
                                   server_default="app"))
        batch.add_column(sa.Column("seconds_spent", sa.Float, nullable=True))
    op.create_index("ix_rating_item_dimension", "rating", ["item_id", "dimension"])
    with op.batch_alter_table("rater") as batch:
        batch.add_column(sa.Column("simulated", sa.Boolean, nullable=False,
                                   server_default=sa.false()))
    op.create_table(
        "rating_revision",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rating_id", sa.Integer, sa.ForeignKey("rating.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("comment", sa.String, nullable=False),
        sa.Column("flags", sa.JSON, nullable=False),
        sa.Column("rubric_version", sa.String(64), nullable=False),
        sa.Column("seconds_spent", sa.Float, nullable=True),
        sa.Column("changed_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_rating_revision_rating_id", "rating_revision", ["rating_id"])
    op.execute(
        "INSERT INTO rating_revision (rating_id, score, comment, flags, rubric_version, "
        "seconds_spent, changed_at) "
        "SELECT id, score, comment, flags, rubric_version, seconds_spent, updated_at FROM rating"
    )


def downgrade() -> None:
    op.drop_index("ix_rating_revision_rating_id", "rating_revision")
    op.drop_table("rating_revision")
    with op.batch_alter_table("rater") as batch:
        batch.drop_column("simulated")
    op.drop_index("ix_rating_item_dimension", "rating")
    with op.batch_alter_table("rating") as batch:
        batch.drop_column("seconds_spent")
        batch.drop_column("source")
        batch.drop_column("flags")

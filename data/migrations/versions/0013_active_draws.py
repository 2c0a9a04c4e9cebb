"""Active-labelling draws (`h2h assign --to-shrink JUDGE --budget N`): which items were
picked for the psychologists to rate next, with every item's probability of being picked.

Revision ID: 0013
Revises: 0012

Only new tables; nothing existing changes.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "active_draw",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("judge_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("budget", sa.Integer, nullable=False),
        sa.Column("halfwidth", sa.Float, nullable=False),
        sa.Column("rated_before", sa.JSON, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_active_draw_config_hash", "active_draw", ["config_hash"])
    op.create_table(
        "active_draw_item",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("draw_id", sa.Integer, sa.ForeignKey("active_draw.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("probability", sa.Float, nullable=False),
        sa.Column("picked", sa.Boolean, nullable=False),
        sa.UniqueConstraint("draw_id", "item_id", name="uq_active_draw_item"),
    )
    op.create_index("ix_active_draw_item_draw_id", "active_draw_item", ["draw_id"])


def downgrade() -> None:
    op.drop_table("active_draw_item")
    op.drop_table("active_draw")

"""Pairwise comparisons: pairs of replies to one scenario, raters' preferences between them
(with revisions), the pair queue of each rater, and a pairwise judge's answers in both orders.

Revision ID: 0012
Revises: 0011

Only new tables; nothing existing changes. A pairwise judge configuration is stored in
``judge_config`` like any judge (its mode says "pairwise"), so the cost ledger, batches and
``h2h judge configs`` treat it alike.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pair",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("item_a", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_b", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("scenario", sa.String(200), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("attention", sa.JSON, nullable=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("item_a", "item_b", name="uq_pair_items"),
    )
    op.create_index("ix_pair_item_a", "pair", ["item_a"])
    op.create_index("ix_pair_item_b", "pair", ["item_b"])
    op.create_index("ix_pair_scenario", "pair", ["scenario"])
    op.create_table(
        "pair_assignment",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("rater.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("pair_id", sa.Integer, sa.ForeignKey("pair.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("flipped", sa.Boolean, nullable=False),
        sa.Column("completed_at", UTCDateTime, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("rater_id", "position", name="uq_pair_assignment_position"),
        sa.UniqueConstraint("rater_id", "pair_id", "kind",
                            name="uq_pair_assignment_rater_pair_kind"),
    )
    op.create_index("ix_pair_assignment_pair_id", "pair_assignment", ["pair_id"])
    op.create_table(
        "preference",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("pair_id", sa.Integer, sa.ForeignKey("pair.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("rater.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("winner", sa.String(4), nullable=True),
        sa.Column("strength", sa.Integer, nullable=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("shown_left", sa.String(1), nullable=True),
        sa.Column("comment", sa.String, nullable=False),
        sa.Column("rubric_version", sa.String(64), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("seconds_spent", sa.Float, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("rater_id", "pair_id", "dimension", "kind",
                            name="uq_preference_rater_pair_dim_kind"),
    )
    op.create_index("ix_preference_pair_dimension", "preference", ["pair_id", "dimension"])
    op.create_table(
        "preference_revision",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("preference_id", sa.Integer,
                  sa.ForeignKey("preference.id", ondelete="CASCADE"), nullable=False),
        sa.Column("winner", sa.String(4), nullable=True),
        sa.Column("strength", sa.Integer, nullable=True),
        sa.Column("comment", sa.String, nullable=False),
        sa.Column("rubric_version", sa.String(64), nullable=False),
        sa.Column("seconds_spent", sa.Float, nullable=True),
        sa.Column("changed_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_preference_revision_preference_id", "preference_revision",
                    ["preference_id"])
    op.create_table(
        "pair_judgment",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("judge_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("pair_id", sa.Integer, sa.ForeignKey("pair.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("pair_hash", sa.String(64), nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("order", sa.String(2), nullable=False),
        sa.Column("sample", sa.Integer, nullable=False),
        sa.Column("verdict", sa.String(8), nullable=True),
        sa.Column("winner", sa.String(4), nullable=True),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("unscored_reason", sa.String, nullable=True),
        sa.Column("raw_reply", sa.String, nullable=False),
        sa.Column("reasoning", sa.String, nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("batch_id", sa.String(100), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("config_hash", "pair_id", "dimension", "order", "sample",
                            name="uq_pair_judgment_key"),
    )
    op.create_index("ix_pair_judgment_config_hash", "pair_judgment", ["config_hash"])
    op.create_index("ix_pair_judgment_pair_id", "pair_judgment", ["pair_id"])


def downgrade() -> None:
    op.drop_table("pair_judgment")
    op.drop_table("preference_revision")
    op.drop_table("preference")
    op.drop_table("pair_assignment")
    op.drop_table("pair")

"""Rater quality: study settings, gold scores, training ratings, qualification, attention
checks and their results, norming sessions and their ratings.

Revision ID: 0005
Revises: 0004

Only new tables; nothing existing changes. None of them feeds the main analysis: training,
attention and norming scores live here, apart from ``rating``.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _fk(table: str, ondelete: str = "CASCADE") -> sa.ForeignKey:
    return sa.ForeignKey(f"{table}.id", ondelete=ondelete)


def upgrade() -> None:
    op.create_table(
        "quality_settings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("training_count", sa.Integer, nullable=False),
        sa.Column("training_order", sa.String(10), nullable=False),
        sa.Column("min_within1", sa.Float, nullable=False),
        sa.Column("min_qwk", sa.Float, nullable=False),
        sa.Column("attention_rate", sa.Float, nullable=False),
        sa.Column("min_seconds", sa.Float, nullable=False),
        sa.Column("drift_window", sa.Integer, nullable=False),
        sa.Column("drift_threshold", sa.Float, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "gold_score",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.String(200), _fk("item"), nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("rationale", sa.String, nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("admin_id", sa.Integer, _fk("rater", "SET NULL"), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("item_id", "dimension", name="uq_gold_item_dim"),
    )
    op.create_table(
        "training_rating",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, _fk("rater"), nullable=False),
        sa.Column("item_id", sa.String(200), _fk("item"), nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("seconds_spent", sa.Float, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("rater_id", "item_id", "dimension", "round",
                            name="uq_training_rater_item_dim_round"),
    )
    op.create_table(
        "qualification",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, _fk("rater"), nullable=False, unique=True),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("n_pairs", sa.Integer, nullable=False),
        sa.Column("within1", sa.Float, nullable=True),
        sa.Column("qwk", sa.Float, nullable=True),
        sa.Column("note", sa.String, nullable=False),
        sa.Column("decided_by", sa.Integer, _fk("rater", "SET NULL"), nullable=True),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "attention_check",
        sa.Column("item_id", sa.String(200), _fk("item"), primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("expected", sa.JSON, nullable=False),
        sa.Column("tolerance", sa.Integer, nullable=False),
        sa.Column("note", sa.String, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "attention_result",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, _fk("rater"), nullable=False),
        sa.Column("item_id", sa.String(200), _fk("item"), nullable=False),
        sa.Column("scores", sa.JSON, nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("seconds_spent", sa.Float, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("rater_id", "item_id", name="uq_attention_rater_item"),
    )
    op.create_table(
        "norming_session",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("named", sa.Boolean, nullable=False),
        sa.Column("created_by", sa.Integer, _fk("rater", "SET NULL"), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("revealed_at", UTCDateTime, nullable=True),
        sa.Column("closed_at", UTCDateTime, nullable=True),
    )
    op.create_table(
        "norming_item",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.Integer, _fk("norming_session"), nullable=False),
        sa.Column("item_id", sa.String(200), _fk("item"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.UniqueConstraint("session_id", "item_id", name="uq_norming_item"),
    )
    op.create_table(
        "norming_participant",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.Integer, _fk("norming_session"), nullable=False),
        sa.Column("rater_id", sa.Integer, _fk("rater"), nullable=False),
        sa.UniqueConstraint("session_id", "rater_id", name="uq_norming_participant"),
    )
    op.create_table(
        "norming_rating",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.Integer, _fk("norming_session"), nullable=False),
        sa.Column("rater_id", sa.Integer, _fk("rater"), nullable=False),
        sa.Column("item_id", sa.String(200), _fk("item"), nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("phase", sa.String(10), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("session_id", "rater_id", "item_id", "dimension", "phase",
                            name="uq_norming_rating"),
    )


def downgrade() -> None:
    for table in ("norming_rating", "norming_participant", "norming_item", "norming_session",
                  "attention_result", "attention_check", "qualification", "training_rating",
                  "gold_score", "quality_settings"):
        op.drop_table(table)

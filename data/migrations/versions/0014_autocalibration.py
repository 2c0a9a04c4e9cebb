"""Held-out calibration and drift: a judge configuration's human-scored exemplars
(``judge_config.exemplars``), the study's frozen split of its scenarios
(``calibration_split``), each `h2h calibrate auto` search with its held-out result
(``autocalibration``), and `h2h calibrate drift`'s re-judgments (``drift_check``,
``drift_judgment``).

Revision ID: 0014
Revises: 0013

Configurations stored before have no exemplars (empty), which keeps their hash.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("judge_config") as batch:
        batch.add_column(sa.Column("exemplars", sa.JSON, nullable=True))
    op.create_table(
        "calibration_split",
        sa.Column("scenario", sa.String(200), primary_key=True),
        sa.Column("part", sa.String(5), nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "autocalibration",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("judge_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("base_hash", sa.String(64), nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("candidates", sa.JSON, nullable=False),
        sa.Column("selected", sa.String(100), nullable=False),
        sa.Column("test", sa.JSON, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_autocalibration_config_hash", "autocalibration", ["config_hash"])
    op.create_table(
        "drift_check",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("judge_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("n_items", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime, nullable=True),
    )
    op.create_index("ix_drift_check_config_hash", "drift_check", ["config_hash"])
    op.create_table(
        "drift_judgment",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("check_id", sa.Integer, sa.ForeignKey("drift_check.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_hash", sa.String(64), nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("unscored_reason", sa.String, nullable=True),
        sa.Column("raw_reply", sa.String, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("check_id", "item_id", "dimension",
                            name="uq_drift_judgment_check_item_dim"),
    )
    op.create_index("ix_drift_judgment_check_id", "drift_judgment", ["check_id"])


def downgrade() -> None:
    op.drop_table("drift_judgment")
    op.drop_table("drift_check")
    op.drop_table("autocalibration")
    op.drop_table("calibration_split")
    with op.batch_alter_table("judge_config") as batch:
        batch.drop_column("exemplars")

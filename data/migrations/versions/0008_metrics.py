"""Reference-based automatic metrics: metric configurations and their scores per item.

Revision ID: 0008
Revises: 0007

Only new tables; nothing existing changes. A metric configuration is stored like a judge
configuration (name, metric, library version, tokenizer, settings hash), so the analysis can
place each metric beside the judges and the human ceiling.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "metric_config",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("metric", sa.String(40), nullable=False),
        sa.Column("library", sa.String(100), nullable=False),
        sa.Column("library_version", sa.String(40), nullable=False),
        sa.Column("tokenizer", sa.JSON, nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("signature", sa.String, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "metric_score",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("metric_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_hash", sa.String(64), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("cjk_share", sa.Float, nullable=False),
        sa.Column("reason", sa.String, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("config_hash", "item_id", name="uq_metric_score_config_item"),
    )
    op.create_index("ix_metric_score_config_hash", "metric_score", ["config_hash"])
    op.create_index("ix_metric_score_item_id", "metric_score", ["item_id"])


def downgrade() -> None:
    op.drop_table("metric_score")
    op.drop_table("metric_config")

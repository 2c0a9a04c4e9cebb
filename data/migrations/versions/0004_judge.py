"""LLM judges and response generation: judge configurations, judgments, Anthropic batches,
the cost ledger, generation configurations and generated responses.

Revision ID: 0004
Revises: 0003

Only new tables; nothing existing changes.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge_config",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("template_name", sa.String(200), nullable=False),
        sa.Column("template_hash", sa.String(64), nullable=False),
        sa.Column("template", sa.JSON, nullable=False),
        sa.Column("rubric_version", sa.String(64), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("reason_first", sa.Boolean, nullable=False),
        sa.Column("structured", sa.Boolean, nullable=False),
        sa.Column("temperature", sa.Float, nullable=True),
        sa.Column("max_tokens", sa.Integer, nullable=False),
        sa.Column("samples", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "judgment",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("judge_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("item_hash", sa.String(64), nullable=False),
        sa.Column("dimension", sa.String(40), nullable=False),
        sa.Column("sample", sa.Integer, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("unscored_reason", sa.String, nullable=True),
        sa.Column("raw_reply", sa.String, nullable=False),
        sa.Column("reasoning", sa.String, nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("batch_id", sa.String(100), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("config_hash", "item_id", "dimension", "sample",
                            name="uq_judgment_config_item_dim_sample"),
    )
    op.create_index("ix_judgment_config_hash", "judgment", ["config_hash"])
    op.create_index("ix_judgment_item_id", "judgment", ["item_id"])
    op.create_table(
        "judge_batch",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("provider_batch_id", sa.String(100), nullable=False, unique=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("judge_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("request_count", sa.Integer, nullable=False),
        sa.Column("requests", sa.JSON, nullable=False),
        sa.Column("submitted_at", UTCDateTime, nullable=False),
        sa.Column("ended_at", UTCDateTime, nullable=True),
        sa.Column("collected_at", UTCDateTime, nullable=True),
    )
    op.create_index("ix_judge_batch_config_hash", "judge_batch", ["config_hash"])
    op.create_table(
        "cost_ledger",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64), nullable=False),
        sa.Column("item_id", sa.String(200), nullable=True),
        sa.Column("call_kind", sa.String(20), nullable=False),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("status", sa.String(60), nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("cache_write_tokens", sa.Integer, nullable=False),
        sa.Column("cache_read_tokens", sa.Integer, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=True),
        sa.Column("batch", sa.Boolean, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_cost_ledger_config_hash", "cost_ledger", ["config_hash"])
    op.create_table(
        "generation_config",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("templates_hash", sa.String(64), nullable=False),
        sa.Column("sap_hash", sa.String(64), nullable=False),
        sa.Column("temperature", sa.Float, nullable=True),
        sa.Column("max_tokens", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "generation",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("config_hash", sa.String(64),
                  sa.ForeignKey("generation_config.hash", ondelete="CASCADE"), nullable=False),
        sa.Column("scenario", sa.String(200), nullable=False),
        sa.Column("condition", sa.String(100), nullable=False),
        sa.Column("item_id", sa.String(200), sa.ForeignKey("item.id", ondelete="SET NULL"),
                  nullable=True),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("reason", sa.String, nullable=True),
        sa.Column("raw_reply", sa.String, nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("config_hash", "scenario", "condition",
                            name="uq_generation_config_scenario_condition"),
    )
    op.create_index("ix_generation_config_hash", "generation", ["config_hash"])


def downgrade() -> None:
    for table in ("generation", "generation_config", "cost_ledger", "judge_batch", "judgment",
                  "judge_config"):
        op.drop_table(table)

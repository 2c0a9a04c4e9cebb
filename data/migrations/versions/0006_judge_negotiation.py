"""Judges on any OpenAI-compatible server and in-process local models.

Revision ID: 0006
Revises: 0005

* ``judge_config.output_form``: the structured-output form negotiated with the server
  (json_schema, json_object, tools, grammar or text), remembered so the next run starts there;
  NULL until a run has settled it (every existing configuration).
* ``judge_config.model_digest`` / ``model_file``: for a GGUF model run in-process, the file's
  SHA-256 (part of the configuration's hash) and where it was read from. NULL for remote models.
* ``cost_ledger.seconds``: wall time of each attempt; NULL for attempts recorded before.

Only new nullable columns; nothing existing changes.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("judge_config") as batch:
        batch.add_column(sa.Column("output_form", sa.String(20), nullable=True))
        batch.add_column(sa.Column("model_digest", sa.String(64), nullable=True))
        batch.add_column(sa.Column("model_file", sa.String, nullable=True))
    with op.batch_alter_table("cost_ledger") as batch:
        batch.add_column(sa.Column("seconds", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("cost_ledger") as batch:
        batch.drop_column("seconds")
    with op.batch_alter_table("judge_config") as batch:
        batch.drop_column("model_file")
        batch.drop_column("model_digest")
        batch.drop_column("output_form")

"""The language a judge configuration renders the rubric in (``judge_config.rubric_language``:
"en", "zh", "item" for each item's own language, or empty for the rubric's own language).

Revision ID: 0010
Revises: 0009

Part of the configuration's hash when set; configurations stored before keep their hash (they
rendered the rubric in its own language, which is what empty means).
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("judge_config") as batch:
        batch.add_column(sa.Column("rubric_language", sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("judge_config") as batch:
        batch.drop_column("rubric_language")

"""Each rater's language for the app (``rater.language``: "en", "zh", or empty for the
default).

Revision ID: 0009
Revises: 0008

Chosen on the sign-in page (or in the sidebar) and kept with the rater, so the app speaks it
on every device they sign in from. Existing raters keep the default (English).
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rater") as batch:
        batch.add_column(sa.Column("language", sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rater") as batch:
        batch.drop_column("language")

"""When a rater acknowledged their training result (``qualification.acknowledged_at``): the
result screen ("You passed the training round", "The study team has released you") is shown
on every page load until the rater presses "Start rating", not only in the browser tab that
finished the round.

Revision ID: 0011
Revises: 0010

Raters who passed or were released before this revision have rated already (the screen was
theirs once, in the tab of the time): their result counts as acknowledged, at its date.
"""

import sqlalchemy as sa
from alembic import op

from data.models import UTCDateTime

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("qualification") as batch:
        batch.add_column(sa.Column("acknowledged_at", UTCDateTime, nullable=True))
    op.execute("UPDATE qualification SET acknowledged_at = updated_at "
               "WHERE status IN ('passed', 'released')")


def downgrade() -> None:
    with op.batch_alter_table("qualification") as batch:
        batch.drop_column("acknowledged_at")

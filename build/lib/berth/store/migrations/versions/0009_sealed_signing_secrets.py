"""Signing secrets stored sealed (AES-GCM under BERTH_SECRET_KEY) instead of in plain text.

Existing rows are sealed with the key `berth db upgrade` runs with; a downgrade opens them
again with it.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import context, op

from berth.domain.sealing import SecretBox
from berth.settings import Settings

revision = "0009"
down_revision = "0008"

_table = sa.table(
    "signing_secrets",
    sa.column("id", sa.Integer),
    sa.column("connection_id", sa.String),
    sa.column("secret", sa.String),
    sa.column("sealed_secret", sa.String),
)


def _box() -> SecretBox:
    given = context.config.attributes.get("secret_box")
    return given if isinstance(given, SecretBox) else Settings().secret_box()


def upgrade() -> None:
    with op.batch_alter_table("signing_secrets") as batch:
        batch.add_column(sa.Column("sealed_secret", sa.String(255), nullable=True))
    bind = op.get_bind()
    rows = bind.execute(sa.select(_table.c.id, _table.c.connection_id, _table.c.secret)).all()
    if rows:
        box = _box()
        for row in rows:
            sealed = box.seal(row.secret, row.connection_id)
            bind.execute(_table.update().where(_table.c.id == row.id).values(sealed_secret=sealed))
    with op.batch_alter_table("signing_secrets") as batch:
        batch.drop_column("secret")
        batch.alter_column("sealed_secret", existing_type=sa.String(255), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("signing_secrets") as batch:
        batch.add_column(sa.Column("secret", sa.String(100), nullable=True))
    bind = op.get_bind()
    rows = bind.execute(sa.select(_table.c.id, _table.c.connection_id, _table.c.sealed_secret)).all()
    if rows:
        box = _box()
        for row in rows:
            opened = box.open(row.sealed_secret, row.connection_id)
            bind.execute(_table.update().where(_table.c.id == row.id).values(secret=opened))
    with op.batch_alter_table("signing_secrets") as batch:
        batch.drop_column("sealed_secret")
        batch.alter_column("secret", existing_type=sa.String(100), nullable=False)

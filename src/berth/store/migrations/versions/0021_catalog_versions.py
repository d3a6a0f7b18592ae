"""Catalogue versions: every saved catalogue with who saved it, through which door, a summary and
the whole document (issue 30). The catalogue stored now becomes the first version of the history.

Revision ID: 0021
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

from berth.domain.catalog import Catalog, Product, Supplier
from berth.domain.catalog.document import catalog_to_yaml
from berth.store.types import JSONDocument, UTCDateTime

revision = "0021"
down_revision = "0020"


def upgrade() -> None:
    versions = op.create_table(
        "catalog_versions",
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("actor", sa.String(254), nullable=False),
        sa.Column("actor_id", sa.String(36), nullable=True),
        sa.Column("actor_role", sa.String(16), nullable=False),
        sa.Column("door", sa.String(16), nullable=False),
        sa.Column("summary", sa.String(300), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("version", name="pk_catalog_versions"),
    )
    # Read with the model the store reads it with: the document is what `catalog export` prints.
    bind = op.get_bind()
    meta_table = sa.table(
        "catalog_meta",
        sa.column("id", sa.Integer()),
        sa.column("version", sa.Integer()),
        sa.column("supplier", JSONDocument),
        sa.column("updated_at", UTCDateTime()),
    )
    products = sa.table(
        "products",
        sa.column("document", JSONDocument),
        sa.column("archived", sa.Boolean()),
        sa.column("position", sa.Integer()),
    )
    meta = bind.execute(sa.select(meta_table).where(meta_table.c.id == 1)).first()
    if meta is None:
        return
    documents = bind.execute(
        sa.select(products.c.document).where(products.c.archived.is_(False)).order_by(products.c.position)
    ).scalars()
    catalog = Catalog(
        supplier=Supplier.model_validate(meta.supplier),
        products=tuple(Product.model_validate(document) for document in documents),
    )
    op.bulk_insert(
        versions,
        [
            {
                "version": int(meta.version),
                "created_at": meta.updated_at,
                "actor": "before the history",
                "actor_id": None,
                "actor_role": "admin",
                "door": "setup",
                "summary": "The catalogue as it was when the history began",
                "document": catalog_to_yaml(catalog),
            }
        ],
    )


def downgrade() -> None:
    op.drop_table("catalog_versions")

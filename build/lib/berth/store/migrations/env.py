"""Alembic environment: runs on the connection `berth.store.migrate` hands over."""

from alembic import context

from berth.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `berth db upgrade`, which supplies the connection")
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
context.run_migrations()

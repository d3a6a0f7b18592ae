"""Persistence: tables, repositories, transactions and migrations. The only place with SQL."""

"""Guests' emails: receipts and notices, queued in the changing transaction and sent by the
mail worker over SMTP (or kept in the database's mailbox when no SMTP server is configured)."""

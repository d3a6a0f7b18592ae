"""Use cases. Each public coroutine is one transaction (unit of work)."""

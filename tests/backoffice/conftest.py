from __future__ import annotations

import httpx
import pytest

from berth.container import Services
from tests.backoffice.helpers import sign_in
from tests.mappings_helpers import add_listings


@pytest.fixture
async def office(stocked: Services) -> Services:
    """What the back office tests look at: every capability's test products, the box office's
    seated parties, and reseller A's mapping rows (tests.mappings_helpers)."""
    return await add_listings(stocked)


@pytest.fixture
async def csrf(client: httpx.AsyncClient, office: Services) -> str:
    """`office` loaded and `client` signed in to the back office: its session's CSRF token."""
    return await sign_in(client)

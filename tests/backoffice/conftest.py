from __future__ import annotations

import httpx
import pytest

from berth.container import Services
from tests.backoffice.helpers import sign_in


@pytest.fixture
async def csrf(client: httpx.AsyncClient, demo: Services) -> str:
    """The demo loaded and `client` signed in to the back office: its session's CSRF token."""
    return await sign_in(client)

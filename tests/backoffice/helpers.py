"""Signing a test client in to the back office, and reading what its pages say."""

from __future__ import annotations

import html
import re

import httpx

from berth.demo.loader import DEMO_ADMIN_TOKEN

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_TAGS = re.compile(r"<[^>]+>")
_SPACES = re.compile(r"\s+")


def csrf_of(page: str) -> str:
    found = _CSRF.search(page)
    assert found is not None, "the page has no form with a CSRF token"
    return found.group(1)


# Typography folded to ASCII, so tests can spell what they expect plainly.
_PLAIN = str.maketrans({"\N{EN DASH}": "-", "\N{MULTIPLICATION SIGN}": "x"})


def text_of(page: str) -> str:
    """The page's visible text on one line, for assertions on what a person reads (with
    `09:30-17:30` and `2 x Adult` for the page's en dash and multiplication sign)."""
    return _SPACES.sub(" ", html.unescape(_TAGS.sub(" ", page))).strip().translate(_PLAIN)


def notice_of(page: str) -> str | None:
    found = re.search(r'<p class="notice (?:success|error)"[^>]*>(.*?)</p>', page, re.S)
    return html.unescape(found.group(1)).strip() if found else None


async def sign_in(client: httpx.AsyncClient, token: str = DEMO_ADMIN_TOKEN) -> str:
    """Sign in through the form; returns the CSRF token of the new session."""
    form = await client.get("/admin/sign-in")
    response = await client.post(
        "/admin/sign-in", data={"password": token, "csrf_token": csrf_of(form.text), "next": "/admin"}
    )
    assert response.status_code == 303, response.text
    dashboard = await client.get("/admin")
    assert dashboard.status_code == 200, dashboard.text
    return csrf_of(dashboard.text)

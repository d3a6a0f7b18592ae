"""A guest's browser in the shop: a signed cookie naming a random session (what its holds are
counted against), the CSRF token of its forms, and the language it reads the shop in.

The cookie is signed with a key of the shop's own derived from BERTH_SECRET_KEY (the shop
works without an admin token). Over HTTPS it is `SameSite=None; Secure; Partitioned`, so the
shop works inside the widget's frame on the supplier's own site; the CSRF token of each form
(and the Origin a browser sends with it) is what stops another site's form, not the cookie's
SameSite. Over plain HTTP (a machine trying the demo) it is `SameSite=Lax`."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from fastapi import Form, Request
from starlette.responses import Response

from berth.domain.languages import choose_language
from berth.http.admin.pages.session import secure_cookies, sign, unsign
from berth.http.context import octo_endpoint, services
from berth.translations import LANGUAGES

SESSION_COOKIE = "berth_shop"
LANGUAGE_COOKIE = "berth_shop_lang"
COOKIE_PATH = "/shop"
SESSION_LIFETIME = timedelta(days=2)


class CsrfRejected(Exception):
    """A form came back without the token of the browser session that showed it."""


@dataclass(frozen=True)
class Guest:
    """The browser asking: its session's nonce (new: the answer sets the cookie), its forms'
    CSRF token, the language it reads the shop in (and whether it just chose it), and when it
    asked (Berth's clock)."""

    nonce: str
    csrf: str
    cookie: str | None  # a new session's signed cookie, for the answer to set
    language: str
    chose_language: bool
    secure: bool
    at: datetime

    @property
    def new(self) -> bool:
        return self.cookie is not None

    @property
    def session_hash(self) -> str:
        """What the database keeps of the session: the SHA-256 of its nonce."""
        return hashlib.sha256(self.nonce.encode()).hexdigest()


def _key(request: Request) -> bytes:
    return services(request).shop.cookie_key


def _csrf(key: bytes, nonce: str) -> str:
    return hmac.digest(key, b"shop csrf\0" + nonce.encode(), "sha256").hex()


def shop_language(request: Request) -> tuple[str, bool]:
    """The language of the shop's pages: `?lang=` (remembered in a cookie), else the one
    remembered, else the best of Accept-Language Berth writes its texts in, else English."""
    asked = request.query_params.get("lang", "")
    if asked in LANGUAGES:
        return asked, True
    kept = request.cookies.get(LANGUAGE_COOKIE, "")
    if kept in LANGUAGES:
        return kept, False
    return choose_language(request.headers.get("accept-language"), list(LANGUAGES)) or LANGUAGES[0], False


async def guest(request: Request) -> Guest:
    """Dependency of every page: the browser's session, a new one if it has none."""
    key = _key(request)
    at = services(request).clock()
    now = at.timestamp()
    data = unsign(key, request.cookies.get(SESSION_COOKIE, ""))
    nonce, expires = (data or {}).get("n"), (data or {}).get("e")
    cookie = None
    if not (isinstance(nonce, str) and isinstance(expires, int) and expires > now):
        nonce = secrets.token_urlsafe(32)
        cookie = sign(key, {"n": nonce, "e": int(now + SESSION_LIFETIME.total_seconds())})
    assert isinstance(nonce, str)
    language, chose = shop_language(request)
    return Guest(nonce, _csrf(key, nonce), cookie, language, chose, secure_cookies(request), at)


def _same_origin(request: Request) -> bool:
    """A form's Origin (or, without one, Referer), when the browser sends it, is Berth's own."""
    sent = request.headers.get("origin") or request.headers.get("referer")
    if not sent or sent == "null":
        return sent != "null"
    parts, own = urlsplit(sent), urlsplit(octo_endpoint(request))
    return (parts.scheme, parts.netloc) == (own.scheme, own.netloc)


async def guest_form(request: Request, csrf: str = Form(default="")) -> Guest:
    """Dependency of every form: the browser's session, whose CSRF token the form must carry
    (a browser without the session's cookie, or another site's form, is refused)."""
    found = await guest(request)
    if found.new or not hmac.compare_digest(csrf.encode(), found.csrf.encode()) or not _same_origin(request):
        raise CsrfRejected
    return found


def remember(response: Response, found: Guest) -> None:
    """The cookies of a page's answer: a new session's, and a language just chosen."""
    extra = {"secure": True, "samesite": "none", "partitioned": True} if found.secure else {"samesite": "lax"}
    if found.chose_language:
        response.set_cookie(
            LANGUAGE_COOKIE, found.language, max_age=365 * 86400, path=COOKIE_PATH, httponly=True, **extra
        )
    if found.cookie is not None:
        lifetime = int(SESSION_LIFETIME.total_seconds())
        response.set_cookie(
            SESSION_COOKIE, found.cookie, max_age=lifetime, path=COOKIE_PATH, httponly=True, **extra
        )

"""Staff sessions of the back office: a signed cookie, CSRF tokens and one-shot notices.

Cookies are signed with a key derived from the admin token: every process shares it without
more configuration, and changing the token signs everyone out. A visitor who has not signed
in yet gets an anonymous session too, so the sign-in form carries a CSRF token like any other.

A member of staff's session names the member and their session generation; every page checks
both against the database, so disabling the account (which bumps the generation) signs them
out everywhere at once. A session without a member is the bootstrap admin's (the admin token).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import orjson
from fastapi import Form, Request
from starlette.responses import Response

from berth.container import Services
from berth.domain.staff import BOOTSTRAP_ADMIN, Actor, Role, StaffMember
from berth.http.context import octo_endpoint, services
from berth.services.catalog import CatalogSnapshot
from berth.settings import Settings

SESSION_COOKIE = "berth_session"
NOTICE_COOKIE = "berth_notice"
DEVICE_COOKIE = "berth_device"
COOKIE_PATH = "/admin"
SESSION_LIFETIME = timedelta(hours=12)
DEVICE_LIFETIME = timedelta(days=90)


class SignInRequired(Exception):
    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


class BackOfficeDisabled(Exception):
    """No admin token is configured, so nobody can sign in."""


class CsrfRejected(Exception):
    """A form came back without the token of the session that showed it."""


class PasswordChangeRequired(Exception):
    """A member signed in with a one-time password: they choose their own before anything else."""


@dataclass(frozen=True)
class Session:
    nonce: str
    signed_in: bool
    expires_at: int  # Unix time
    member_id: str | None = None  # None: the bootstrap admin (or nobody yet)
    generation: int = 0


@dataclass(frozen=True)
class Notice:
    """A message shown once on the next page: what an action changed, or why it did not."""

    kind: Literal["success", "error"]
    text: str


@dataclass(frozen=True)
class Staff:
    """A signed-in member of staff, with what every page needs."""

    services: Services
    catalog: CatalogSnapshot
    key: bytes
    csrf: str
    secure: bool
    actor: Actor
    member: StaffMember | None  # None: signed in with the admin token

    def may(self, role: Role | str) -> bool:
        """Whether the pages show (and the routes accept) what `role` may do."""
        return self.actor.may(role)


@dataclass(frozen=True)
class Device:
    """A browser that signed in to `account` before (OWASP's device cookie): its wrong passwords
    count against `nonce`, and others' lockouts of the account or its address do not stop it."""

    account: str
    nonce: str


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signing_key(settings: Settings) -> bytes | None:
    if settings.admin_token is None:
        return None
    token = settings.admin_token.get_secret_value().encode()
    return hashlib.sha256(b"berth back office cookies\0" + token).digest()


def sign(key: bytes, data: dict[str, Any]) -> str:
    payload = _b64(orjson.dumps(data))
    return payload + "." + _b64(hmac.digest(key, payload.encode(), "sha256"))


def unsign(key: bytes, value: str) -> dict[str, Any] | None:
    payload, _, signature = value.partition(".")
    try:
        expected = _b64(hmac.digest(key, payload.encode(), "sha256"))
        if not hmac.compare_digest(signature, expected):
            return None
        data = orjson.loads(_unb64(payload))
    except (binascii.Error, orjson.JSONDecodeError, UnicodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def new_session(now: datetime, *, signed_in: bool, member: StaffMember | None = None) -> Session:
    expires_at = int((now + SESSION_LIFETIME).timestamp())
    if member is None:
        return Session(secrets.token_urlsafe(16), signed_in, expires_at)
    return Session(secrets.token_urlsafe(16), signed_in, expires_at, member.id, member.session_generation)


def read_session(request: Request, key: bytes, now: datetime) -> Session | None:
    data = unsign(key, request.cookies.get(SESSION_COOKIE, ""))
    if data is None:
        return None
    nonce, signed_in, expires_at = data.get("n"), data.get("s"), data.get("e")
    member_id, generation = data.get("u"), data.get("g", 0)
    if not isinstance(nonce, str) or not isinstance(signed_in, bool) or not isinstance(expires_at, int):
        return None
    if not isinstance(member_id, str | None) or not isinstance(generation, int):
        return None
    if expires_at <= now.timestamp():
        return None
    return Session(nonce, signed_in, expires_at, member_id, generation)


def csrf_for(key: bytes, session: Session) -> str:
    return _b64(hmac.digest(key, b"csrf\0" + session.nonce.encode(), "sha256"))


def secure_cookies(request: Request) -> bool:
    """HTTPS only when Berth is reached over HTTPS: its public URL says, or else the request."""
    return octo_endpoint(request).lower().startswith("https://")


def set_session(response: Response, key: bytes, session: Session, *, secure: bool) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        sign(
            key,
            {
                "n": session.nonce,
                "s": session.signed_in,
                "e": session.expires_at,
                "u": session.member_id,
                "g": session.generation,
            },
        ),
        max_age=int(SESSION_LIFETIME.total_seconds()),
        path=COOKIE_PATH,
        secure=secure,
        httponly=True,
        samesite="lax",
    )


def end_session(response: Response, *, secure: bool) -> None:
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH, secure=secure, httponly=True, samesite="lax")


def set_notice(response: Response, key: bytes, notice: Notice, *, secure: bool) -> None:
    response.set_cookie(
        NOTICE_COOKIE,
        sign(key, {"k": notice.kind, "t": notice.text}),
        max_age=300,
        path=COOKIE_PATH,
        secure=secure,
        httponly=True,
        samesite="lax",
    )


def set_device(response: Response, key: bytes, account: str, now: datetime, *, secure: bool) -> None:
    """A new device cookie for `account` (its guessing key, lowercase), after a right password."""
    expires_at = int((now + DEVICE_LIFETIME).timestamp())
    value = sign(key, {"k": "device", "a": account, "d": secrets.token_urlsafe(16), "e": expires_at})
    response.set_cookie(
        DEVICE_COOKIE,
        value,
        max_age=int(DEVICE_LIFETIME.total_seconds()),
        path=COOKIE_PATH + "/sign-in",
        secure=secure,
        httponly=True,
        samesite="strict",
    )


def read_device(request: Request, key: bytes, now: datetime) -> Device | None:
    data = unsign(key, request.cookies.get(DEVICE_COOKIE, ""))
    if data is None or data.get("k") != "device":
        return None
    account, nonce, expires_at = data.get("a"), data.get("d"), data.get("e")
    if not isinstance(account, str) or not isinstance(nonce, str) or not isinstance(expires_at, int):
        return None
    return Device(account, nonce) if expires_at > now.timestamp() else None


def take_notice(request: Request, key: bytes | None) -> Notice | None:
    """The notice the previous response left (the page that shows it must clear the cookie)."""
    raw = request.cookies.get(NOTICE_COOKIE)
    data = unsign(key, raw) if key is not None and raw else None
    if data is None or data.get("k") not in ("success", "error") or not isinstance(data.get("t"), str):
        return None
    return Notice(data["k"], data["t"])


def _next_path(request: Request) -> str:
    if request.method != "GET":
        return COOKIE_PATH
    query = request.url.query
    return request.url.path + ("?" + query if query else "")


async def current_staff(request: Request) -> Staff | None:
    """The signed-in member of staff, or None; raises BackOfficeDisabled without admin token."""
    svc = services(request)
    key = signing_key(svc.settings)
    if key is None:
        raise BackOfficeDisabled
    session = read_session(request, key, svc.clock())
    if session is None or not session.signed_in:
        return None
    member = None
    if session.member_id is not None:
        member = await svc.staff.in_session(session.member_id, session.generation)
        if member is None:  # disabled, or signed out everywhere since
            return None
    actor = member.actor if member is not None else BOOTSTRAP_ADMIN
    snapshot = await svc.catalog.snapshot()
    return Staff(svc, snapshot, key, csrf_for(key, session), secure_cookies(request), actor, member)


async def signed_in(request: Request) -> Staff:
    """The signed-in member of staff, even one who must still choose a password."""
    found = await current_staff(request)
    if found is None:
        raise SignInRequired(_next_path(request))
    return found


async def staff(request: Request) -> Staff:
    """Dependency of every page: the signed-in member of staff, or off to the sign-in page (or
    to choosing a password, after signing in with a one-time one)."""
    found = await signed_in(request)
    if found.member is not None and found.member.must_change_password:
        raise PasswordChangeRequired
    return found


def _form_of(needed: Role) -> Callable[[Request, str], Awaitable[Staff]]:
    async def check(request: Request, csrf_token: str = Form(default="")) -> Staff:
        found = await staff(request)
        if not hmac.compare_digest(csrf_token.encode(), found.csrf.encode()):
            raise CsrfRejected
        found.actor.require(needed, "This action")
        return found

    return check


# Dependencies of the forms, by the role their action needs: `staff`, the form's CSRF token
# must be the session's, and the member's role must allow it (else a FORBIDDEN page).
staff_form = _form_of(Role.VIEWER)
operator_form = _form_of(Role.OPERATOR)
admin_form = _form_of(Role.ADMIN)
editor_form = _form_of(Role.EDITOR)  # the catalogue: editors and admins

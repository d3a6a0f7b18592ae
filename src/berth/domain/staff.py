"""Staff accounts: roles and what each may do, who an action is by, and the secrets staff
sign in with (a password, hashed with argon2 by the services; an API token, stored as its
SHA-256 like a reseller's key)."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from berth.domain.errors import BadRequest, Forbidden

TOKEN_PREFIX = "berth_staff_"
MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 200
# Enough of an address to tell it is one (an email is only a sign-in name here: nothing is sent).
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class Role(StrEnum):
    """Viewer, operator and admin in order of power: each may do everything of those before it.
    An editor reads everything and changes the catalogue, nothing else; an admin may too."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"
    EDITOR = "editor"

    @property
    def rank(self) -> int:
        return list(Role).index(self)

    def allows(self, needed: Role) -> bool:
        if self is needed or self is Role.ADMIN or needed is Role.VIEWER:
            return True
        if Role.EDITOR in (self, needed):
            return False
        return self.rank >= needed.rank


# What each role adds, in words: refusals and the pages say it.
ROLE_POWERS = {
    Role.VIEWER: "read everything",
    Role.OPERATOR: "act on bookings, departures and mappings",
    Role.ADMIN: "manage connections, webhooks, staff and the catalogue",
    Role.EDITOR: "edit the catalogue",
}


# Saving a catalogue over the live bookings it removes or shrinks (`force`): one rule for every
# door (the back office's editor and history, the admin API's import and restore), checked where
# the save finds those bookings. An editor may save anything else.
SAVE_OVER_LIVE_BOOKINGS = Role.ADMIN


class RoleRefused(Forbidden):
    """A member of staff asked for an action their role does not allow."""


@dataclass(frozen=True)
class Actor:
    """Who did something: a member of staff (`staff_id`), the bootstrap admin token, or the
    command line on the server."""

    name: str
    role: Role
    staff_id: str | None = None

    def may(self, needed: Role | str) -> bool:
        return self.role.allows(Role(needed))

    def require(self, needed: Role, doing: str) -> None:
        if not self.may(needed):
            roles = "editor or admin" if needed is Role.EDITOR else needed.value
            raise RoleRefused(
                f"{doing} needs the {roles} role ({ROLE_POWERS[needed]}); {self.name} is {self.role.value}"
            )


BOOTSTRAP_ADMIN = Actor("BERTH_ADMIN_TOKEN", Role.ADMIN)
COMMAND_LINE = Actor("command line", Role.ADMIN)


def shown_name(name: str) -> str:
    """Who did something, as staff read it on a page: a member by their sign-in name, the
    bootstrap admin as `admin token` (as the top bar names it), never the setting's name."""
    return "admin token" if name == BOOTSTRAP_ADMIN.name else name


@dataclass(frozen=True)
class StaffMember:
    id: str
    email: str
    role: Role
    created_at: datetime
    disabled_at: datetime | None
    token_hint: str | None
    must_change_password: bool
    # Bumped to end every session of the member at once (disable, a new password).
    session_generation: int

    @property
    def active(self) -> bool:
        return self.disabled_at is None

    @property
    def actor(self) -> Actor:
        return Actor(self.email, self.role, self.id)


def normalize_email(email: str) -> str:
    """The stored form of a sign-in email (case does not matter), or BadRequest."""
    cleaned = email.strip().lower()
    if not _EMAIL.match(cleaned) or len(cleaned) > 254:
        raise BadRequest(f"{email.strip()!r} is not an email address like ana@example.com")
    return cleaned


def parse_role(value: str) -> Role:
    try:
        return Role(value.strip().lower())
    except ValueError:
        raise BadRequest(
            f"{value!r} is not a role: choose one of {', '.join(r.value for r in Role)}"
        ) from None


def new_password() -> str:
    """A one-time password to hand over: 16 characters of letters and digits, easy to type."""
    alphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(16))


def check_new_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise BadRequest(f"A password needs at least {MIN_PASSWORD_LENGTH} characters")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise BadRequest(f"A password has at most {MAX_PASSWORD_LENGTH} characters")


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """Tokens are long random strings: one SHA-256 is enough (no salt or stretching needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_hint(token: str) -> str:
    return "…" + token[-4:]

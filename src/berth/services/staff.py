"""Staff accounts: create one (with a one-time password), give it an API token, disable it,
and the checks of a password, a token or a session. Every change is in the audit trail.

Argon2 is slow on purpose (tens of milliseconds): hashes are made and checked in a worker
thread, not on the event loop."""

from __future__ import annotations

import asyncio
import functools
import uuid

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from berth.domain.audit import Target
from berth.domain.errors import BadRequest, NotFound
from berth.domain.staff import (
    Actor,
    Role,
    StaffMember,
    check_new_password,
    hash_token,
    new_password,
    new_token,
    normalize_email,
    token_hint,
)
from berth.services.clock import Clock
from berth.store import audit_repo, staff_repo
from berth.store.database import Database

_hasher = PasswordHasher()


@functools.cache
def _nobody() -> str:
    """Checked when the email is unknown, so that a wrong email takes as long as a wrong
    password. Made at the first such sign-in, not at import: hashing takes a good part of a
    second, which every process (each `berth` command, each worker) paid at start."""
    return _hasher.hash(new_password())


def _target(member: StaffMember) -> Target:
    return Target("staff", member.id, member.email)


def _matches(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


class StaffService:
    def __init__(self, database: Database, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    async def create(self, email: str, role: Role, *, actor: Actor) -> tuple[StaffMember, str]:
        """A new member and their one-time password (not stored: it cannot be shown again; they
        choose their own when they first sign in)."""
        address = normalize_email(email)
        password = new_password()
        password_hash = await asyncio.to_thread(_hasher.hash, password)
        member = StaffMember(
            id=str(uuid.uuid4()),
            email=address,
            role=role,
            created_at=self._clock(),
            disabled_at=None,
            token_hint=None,
            must_change_password=True,
            session_generation=0,
        )
        async with self._db.transaction(write=True) as conn:
            existing = await staff_repo.find_member(conn, address)
            if existing is not None:
                state = "" if existing.active else " (disabled)"
                raise BadRequest(f"A member of staff with the email {address!r} already exists{state}")
            await staff_repo.insert_member(conn, member, password_hash)
            await audit_repo.record(
                conn, actor, "staff.create", _target(member), {"role": role.value}, at=member.created_at
            )
        return member, password

    async def list(self) -> list[StaffMember]:
        async with self._db.transaction(write=False) as conn:
            return await staff_repo.list_members(conn)

    async def get(self, email_or_id: str) -> StaffMember:
        async with self._db.transaction(write=False) as conn:
            found = await staff_repo.find_member(conn, email_or_id)
        if found is None:
            raise NotFound(f"No member of staff with the email or id {email_or_id!r}")
        return found

    async def issue_token(self, email_or_id: str, *, actor: Actor) -> tuple[StaffMember, str]:
        """A new API token for the member (the previous one stops working); shown once."""
        token = new_token()
        async with self._db.transaction(write=True) as conn:
            member = await staff_repo.find_member(conn, email_or_id)
            if member is None:
                raise NotFound(f"No member of staff with the email or id {email_or_id!r}")
            if not member.active:
                raise BadRequest(f"{member.email} is disabled: a disabled account gets no token")
            await staff_repo.set_token(conn, member.id, hash_token(token), token_hint(token))
            await audit_repo.record(
                conn,
                actor,
                "staff.token",
                _target(member),
                {"tokenHint": token_hint(token)},
                at=self._clock(),
            )
            updated = await staff_repo.find_member(conn, member.id)
        assert updated is not None
        return updated, token

    async def disable(self, email_or_id: str, *, actor: Actor) -> StaffMember:
        """Disable an account: its token stops working and every session of it ends. Never the
        actor's own, nor the last active admin (every door: API, back office, command line)."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            member = await staff_repo.find_member(conn, email_or_id)
            if member is None:
                raise NotFound(f"No member of staff with the email or id {email_or_id!r}")
            if not member.active:
                raise BadRequest(f"{member.email} was already disabled; nothing changed")
            if member.id == actor.staff_id:
                raise BadRequest(
                    "You cannot disable your own account: another admin (or `berth staff disable`) can"
                )
            if member.role is Role.ADMIN and await staff_repo.active_admin_ids(conn) == [member.id]:
                raise BadRequest(
                    f"{member.email} is the last active admin; nothing changed. Create another admin "
                    "first (`berth staff create EMAIL --role admin`), then disable this one"
                )
            await staff_repo.disable(conn, member.id, now)
            await audit_repo.record(conn, actor, "staff.disable", _target(member), at=now)
            disabled = await staff_repo.find_member(conn, member.id)
        assert disabled is not None
        return disabled

    async def change_password(self, member: StaffMember, current: str, new: str) -> StaffMember:
        """The member's own new password; their other sessions end."""
        check_new_password(new)
        if new == current:
            raise BadRequest("The new password must differ from the current one")
        async with self._db.transaction(write=False) as conn:
            found = await staff_repo.with_password_hash(conn, member.email)
        if found is None or not await asyncio.to_thread(_matches, found[1], current):
            raise BadRequest("The current password is not right; nothing changed")
        new_hash = await asyncio.to_thread(_hasher.hash, new)
        async with self._db.transaction(write=True) as conn:
            await staff_repo.set_password(conn, member.id, new_hash, must_change=False, end_sessions=True)
            await audit_repo.record(conn, member.actor, "staff.password", _target(member), at=self._clock())
            changed = await staff_repo.find_member(conn, member.id)
        assert changed is not None
        return changed

    # --- checks ------------------------------------------------------------------------------

    async def sign_in(self, email: str, password: str) -> StaffMember | None:
        """The active member with this email and password, or None."""
        async with self._db.transaction(write=False) as conn:
            found = await staff_repo.with_password_hash(conn, email.strip().lower())
        password_hash = found[1] if found is not None else await asyncio.to_thread(_nobody)
        matches = await asyncio.to_thread(_matches, password_hash, password)
        if found is None or not matches or not found[0].active:
            return None
        return found[0]

    async def by_token(self, token: str) -> StaffMember | None:
        """The active member holding this API token, or None."""
        async with self._db.single_read() as conn:
            member = await staff_repo.by_token_hash(conn, hash_token(token))
        return member if member is not None and member.active else None

    async def in_session(self, member_id: str, generation: int) -> StaffMember | None:
        """The member of a session, while the account is active and the session not ended."""
        async with self._db.single_read() as conn:
            member = await staff_repo.find_member(conn, member_id)
        if member is None or not member.active or member.session_generation != generation:
            return None
        return member

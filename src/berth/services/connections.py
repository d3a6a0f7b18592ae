"""Reseller connections: create (the key is shown once), list, revoke, authenticate."""

from __future__ import annotations

import time
import uuid

from berth.domain.audit import Target
from berth.domain.connections import Connection, hash_api_key, key_hint, new_api_key
from berth.domain.errors import BadRequest, NotFound
from berth.domain.sealing import SecretBox
from berth.domain.staff import Actor
from berth.domain.webhooks import new_signing_secret
from berth.services.clock import Clock
from berth.store import audit_repo, connections_repo, webhooks_repo
from berth.store.database import Database

MAX_REMEMBERED_KEYS = 10_000


def connection_target(connection: Connection) -> Target:
    return Target("connection", connection.id, connection.name)


class ConnectionService:
    """Connections and API-key checks. A key's answer (its connection and the catalogue
    version) is remembered for `cache_seconds`, so a busy process checks the database about
    once a second per key instead of on every request; this process's own revocations
    forget it at once, other processes' within `cache_seconds`."""

    def __init__(self, database: Database, clock: Clock, box: SecretBox, cache_seconds: float = 0.0) -> None:
        self._db = database
        self._clock = clock
        self._box = box
        self._cache_seconds = cache_seconds
        self._recent: dict[str, tuple[float, tuple[Connection, int] | None]] = {}

    async def create(self, name: str, *, actor: Actor) -> tuple[Connection, str, str]:
        """A new connection, its API key (not stored: it cannot be shown again) and the secret
        that signs its webhook deliveries."""
        name = name.strip()
        if not name:
            raise BadRequest("A connection needs a name")
        key = new_api_key()
        secret = new_signing_secret()
        connection = Connection(
            id=str(uuid.uuid4()), name=name, key_hint=key_hint(key), created_at=self._clock(), revoked_at=None
        )
        async with self._db.transaction(write=True) as conn:
            if await connections_repo.find_connection(conn, name) is not None:
                raise BadRequest(f"A connection named {name!r} already exists")
            await connections_repo.insert_connection(conn, connection, hash_api_key(key))
            await webhooks_repo.add_signing_secret(
                conn, self._box, connection.id, secret, connection.created_at, None
            )
            await audit_repo.record(
                conn, actor, "connection.create", connection_target(connection), {"keyHint": connection.key_hint},
                at=connection.created_at,
            )  # fmt: skip
        return connection, key, secret

    async def ensure(self, name: str, api_key: str, signing_secret: str | None = None) -> Connection:
        """The connection with this fixed key (and signing secret), created if missing: for the
        demo's documented connections."""
        secret = signing_secret or new_signing_secret()
        async with self._db.transaction(write=True) as conn:
            existing = await connections_repo.find_by_key_hash(conn, hash_api_key(api_key))
            if existing is not None:
                if signing_secret and not await webhooks_repo.has_signing_secret(
                    conn, self._box, existing.id, signing_secret
                ):
                    await webhooks_repo.add_signing_secret(
                        conn, self._box, existing.id, signing_secret, self._clock(), None
                    )
                return existing
            connection = Connection(
                id=str(uuid.uuid4()),
                name=name,
                key_hint=key_hint(api_key),
                created_at=self._clock(),
                revoked_at=None,
            )
            await connections_repo.insert_connection(conn, connection, hash_api_key(api_key))
            await webhooks_repo.add_signing_secret(
                conn, self._box, connection.id, secret, connection.created_at, None
            )
            return connection

    async def sealed_with_another_key(self) -> list[Connection]:
        """Active connections whose live signing secrets BERTH_SECRET_KEY (and the previous keys)
        cannot open: their webhooks could never be signed."""
        async with self._db.transaction(write=False) as conn:
            owners = await webhooks_repo.unopenable_secret_owners(conn, self._box, self._clock())
            listed = await connections_repo.list_connections(conn)
        return [c for c in listed if c.id in owners and c.revoked_at is None]

    async def list(self) -> list[Connection]:
        async with self._db.transaction(write=False) as conn:
            return await connections_repo.list_connections(conn)

    async def revoke(self, id_or_name: str, *, actor: Actor, again: bool = True) -> Connection:
        """Revoke a connection. One already revoked stays as it was: answered as it is, or
        with `again=False` refused (BadRequest) so a caller can say that nothing changed."""
        async with self._db.transaction(write=True) as conn:
            connection = await connections_repo.find_connection(conn, id_or_name)
            if connection is None:
                raise NotFound(f"No connection with id or name {id_or_name!r}")
            if connection.revoked_at is not None and not again:
                raise BadRequest(
                    f"Connection {connection.name} ({connection.id}) was already revoked on "
                    f"{connection.revoked_at:%Y-%m-%d %H:%M} UTC; nothing changed"
                )
            if connection.revoked_at is None:
                now = self._clock()
                await connections_repo.revoke_connection(conn, connection.id, now)
                await audit_repo.record(
                    conn, actor, "connection.revoke", connection_target(connection), at=now
                )
        self.forget()
        async with self._db.transaction(write=False) as conn:
            revoked = await connections_repo.find_connection(conn, connection.id)
        assert revoked is not None
        return revoked

    async def get(self, id_or_name: str) -> Connection:
        async with self._db.transaction(write=False) as conn:
            connection = await connections_repo.find_connection(conn, id_or_name)
        if connection is None:
            raise NotFound(f"No connection with id or name {id_or_name!r}")
        return connection

    async def authenticate(self, api_key: str) -> tuple[Connection, int] | None:
        """The active connection for this key and the current catalogue version, or None."""
        key_hash = hash_api_key(api_key)
        now = time.monotonic()
        remembered = self._recent.get(key_hash)
        if remembered is not None and now - remembered[0] < self._cache_seconds:
            return remembered[1]
        async with self._db.single_read() as conn:
            found = await connections_repo.authenticate(conn, key_hash)
        answer = None if found is None or not found[0].active else found
        if self._cache_seconds > 0:
            if len(self._recent) > MAX_REMEMBERED_KEYS:
                self._recent.clear()
            self._recent[key_hash] = (now, answer)
        return answer

    def forget(self) -> None:
        """Drop remembered key checks (after a revocation or a catalogue change here)."""
        self._recent.clear()

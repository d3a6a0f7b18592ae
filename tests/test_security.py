"""Security: where deliveries may go (checked again when sending, redirects never followed),
signing secrets sealed at rest (with the migration of existing rows), and nothing secret in the
logs."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import insert, select, text

from berth.container import Services, build_services
from berth.demo.loader import load_demo
from berth.domain.sealing import SealError, SecretBox
from berth.logs import configure_logging, redact_url
from berth.settings import DEVELOPMENT_SECRET_KEY, Settings
from berth.store.database import Database
from berth.store.migrate import downgrade, upgrade
from berth.store.tables import connections, signing_secrets
from tests.bookings_helpers import confirm, reserve
from tests.conftest import ADMIN, Clock, auth
from tests.receivers import receiver
from tests.test_webhooks import drain, subscribe, verify

KEY = "k" * 40


async def _attempts(client: httpx.AsyncClient, hook_id: str) -> list[dict[str, Any]]:
    listed = (await client.get(f"/admin/api/webhooks/{hook_id}/deliveries", headers=ADMIN)).json()
    (delivery,) = listed["deliveries"]
    detail = (await client.get(f"/admin/api/deliveries/{delivery['id']}", headers=ADMIN)).json()
    attempts: list[dict[str, Any]] = detail["attemptLog"]
    return attempts


# --- delivery targets --------------------------------------------------------------------------


async def test_targets_are_checked_again_when_sending(client: httpx.AsyncClient, bookable: Services) -> None:
    """A target that was public when subscribed may resolve elsewhere later (DNS rebinding):
    the worker checks the address again before every attempt."""
    async with receiver() as target:
        hook = await subscribe(client, target.url)
        bookable.settings.webhook_allow_private_targets = False
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        await drain(bookable)
        assert target.requests == []
        (attempt,) = await _attempts(client, hook["id"])
        assert attempt["statusCode"] is None and "non-public address 127.0.0.1" in attempt["error"]


async def test_redirects_are_never_followed(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver(307) as first, receiver() as elsewhere:
        first.extra_headers = {"Location": elsewhere.url + "?token=t0ps3cret"}
        hook = await subscribe(client, first.url)
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        await drain(bookable)
        assert len(first.requests) == 1 and elsewhere.requests == []
        (attempt,) = await _attempts(client, hook["id"])
        assert attempt["statusCode"] == 307
        assert attempt["error"] == f"redirected to {elsewhere.url}?…; redirects are not followed"


# --- signing secrets at rest -------------------------------------------------------------------


async def _stored_secrets(services: Services) -> list[tuple[str, str]]:
    async with services.database.transaction(write=False) as conn:
        rows = await conn.execute(select(signing_secrets.c.connection_id, signing_secrets.c.sealed_secret))
        return [(row[0], row[1]) for row in rows]


async def test_signing_secrets_are_stored_sealed(client: httpx.AsyncClient, bookable: Services) -> None:
    created = (await client.post("/admin/api/connections", json={"name": "Sealed"}, headers=ADMIN)).json()
    connection_id, secret = created["connection"]["id"], created["signingSecret"]
    rotated = await client.post(f"/admin/api/connections/{connection_id}/rotate-secret", headers=ADMIN)
    stored = [sealed for owner, sealed in await _stored_secrets(bookable) if owner == connection_id]
    assert len(stored) == 2 and all(value.startswith("v1:") for value in stored)
    dump = json.dumps(await _stored_secrets(bookable))
    assert secret not in dump and rotated.json()["signingSecret"] not in dump
    box = Settings().secret_box()  # the tests run with the development key
    assert {box.open(value, connection_id) for value in stored} == {secret, rotated.json()["signingSecret"]}
    other = next(owner for owner, _ in await _stored_secrets(bookable) if owner != connection_id)
    with pytest.raises(SealError):  # bound to its connection: useless in another one's row
        box.open(stored[0], other)


async def test_deliveries_are_signed_with_a_configured_key_and_never_sent_unsigned(
    settings: Settings, clock: Clock
) -> None:
    keyed = Settings(**{**settings.model_dump(), "secret_key": KEY})
    services = build_services(keyed, clock)
    try:
        await load_demo(services)
        transport = httpx.ASGITransport(app=_app(services))
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://berth.test") as client,
            receiver() as target,
        ):
            await subscribe(client, target.url)
            booking = await reserve(client)
            await confirm(client, booking["uuid"])
            await drain(services)
            (received,) = target.requests
            verify("whsec_" + "ZGVtby1yZXNlbGxlci1hLXNpZ25pbmctc2VjcmV0", received)
            for _, sealed in await _stored_secrets(services):
                with pytest.raises(SealError):
                    Settings().secret_box().open(sealed, "x")  # the development key opens none
            # Started with another key, the worker cannot open the secrets: it sends nothing.
            wrong = build_services(Settings(**{**settings.model_dump(), "secret_key": "w" * 40}), clock)
            try:
                await client.post(f"/octo/bookings/{booking['uuid']}/cancel", headers=auth())
                await drain(wrong)
                assert len(target.requests) == 1
                async with wrong.database.transaction(write=False) as conn:
                    errors = [
                        row[0] for row in await conn.execute(text("SELECT error FROM delivery_attempts"))
                    ]
                assert "the connection's signing secrets cannot be opened: check BERTH_SECRET_KEY" in errors
            finally:
                await wrong.close()
    finally:
        await services.close()


def _app(services: Services) -> Any:
    from berth.app import create_app

    return create_app(services=services)


def test_earlier_keys_still_open_what_they_sealed() -> None:
    old, new = SecretBox("o" * 40), SecretBox("n" * 40, previous=["o" * 40])
    sealed = old.seal("whsec_abc", "conn-1")
    assert new.open(sealed, "conn-1") == "whsec_abc"
    assert new.seal("whsec_abc", "conn-1") != new.seal("whsec_abc", "conn-1")  # a fresh nonce each time
    with pytest.raises(SealError):
        SecretBox("n" * 40).open(sealed, "conn-1")
    with pytest.raises(SealError):
        new.open("whsec_abc", "conn-1")
    with pytest.raises(SealError):
        new.open(sealed[:-4] + "AAAA", "conn-1")
    assert "o" * 40 not in repr(new)
    with pytest.raises(ValueError, match="at least 32 characters"):
        Settings(secret_key="short")


@given(st.text(max_size=200), st.text(max_size=40), st.text(max_size=40))
def test_sealed_values_open_only_in_their_context(secret: str, context: str, other: str) -> None:
    box = SecretBox(KEY)
    sealed = box.seal(secret, context)
    assert box.open(sealed, context) == secret
    assert len(secret) < 8 or secret not in sealed
    if other != context:
        with pytest.raises(SealError):
            box.open(sealed, other)


async def test_the_migration_seals_existing_secrets_and_the_downgrade_opens_them(database_url: str) -> None:
    box = SecretBox(KEY)
    database = Database(database_url)
    try:
        await downgrade(database, "0008", box)
        async with database.transaction(write=True) as conn:
            await conn.execute(
                insert(connections).values(
                    id="c-1",
                    name="Old",
                    key_hash="h" * 64,
                    key_hint="…abcd",
                    created_at=_now(),
                    revoked_at=None,
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO signing_secrets (connection_id, secret, created_at) VALUES ('c-1', 'whsec_plain', :at)"
                ),
                {"at": _now().replace(tzinfo=None)},  # stored naive, in UTC (berth.store.types)
            )
        await upgrade(database, box)
        async with database.transaction(write=False) as conn:
            (sealed,) = [row[0] for row in await conn.execute(select(signing_secrets.c.sealed_secret))]
        assert sealed.startswith("v1:") and box.open(sealed, "c-1") == "whsec_plain"
        await downgrade(database, "0008", box)
        async with database.transaction(write=False) as conn:
            plain = [row[0] for row in await conn.execute(text("SELECT secret FROM signing_secrets"))]
        assert plain == ["whsec_plain"]
    finally:
        await upgrade(database, box)  # leave the shared test database at head, whatever happened
        async with database.transaction(write=True) as conn:
            await conn.execute(signing_secrets.delete())
            await conn.execute(connections.delete())
        await database.dispose()


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 6, 1, tzinfo=UTC)


# --- logs ----------------------------------------------------------------------------------------


async def test_no_key_or_secret_is_ever_logged(
    client: httpx.AsyncClient,
    bookable: Services,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Everything that handles a credential, run with DEBUG logs captured: the captured text
    holds none of them."""
    configure_logging("DEBUG", "json")
    caplog.set_level("DEBUG")
    try:
        created = (await client.post("/admin/api/connections", json={"name": "Logged"}, headers=ADMIN)).json()
        key, secret = created["apiKey"], created["signingSecret"]
        rotated = (
            await client.post(
                f"/admin/api/connections/{created['connection']['id']}/rotate-secret", headers=ADMIN
            )
        ).json()["signingSecret"]
        assert (await client.get("/octo/supplier", headers=auth(key))).status_code == 200
        guessed = "berth_guessed-key-that-does-not-exist"
        assert (await client.get("/octo/supplier", headers=auth(guessed))).json()["error"] == "UNAUTHORIZED"
        wrong_admin = "not-the-admin-token-0123"
        await client.get("/admin/api/connections", headers={"Authorization": f"Bearer {wrong_admin}"})
        async with receiver(500) as target:
            hook_url = target.url + "?token=query-s3cret-token"
            response = await client.post(
                "/octo/webhooks",
                json={
                    "event": "booking_update",
                    "url": hook_url,
                    "headers": {"X-Receiver-Token": "header-s3cret"},
                },
                headers=auth(key),
            )
            assert response.status_code == 200
            booking = await reserve(client, key=key)
            await confirm(client, booking["uuid"], key=key)
            await drain(bookable)
            assert len(target.requests) == 1
        await client.post(
            "/octo/bookings", content=b"{broken", headers={**auth(key), "Content-Type": "application/json"}
        )
    finally:
        configure_logging("WARNING", "json")
    captured = capsys.readouterr()
    logged = captured.err + captured.out + caplog.text
    assert '"event": "request"' in logged and '"event": "delivery attempt"' in logged  # logs were captured
    for value in (
        key, secret, rotated, guessed, wrong_admin, "demo-admin", "demo-reseller-a", "query-s3cret-token",
        "header-s3cret", DEVELOPMENT_SECRET_KEY, secret.removeprefix("whsec_"),
    ):  # fmt: skip
        assert value not in logged, value


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pw@hooks.example:8443/a/b?token=x#f", "https://hooks.example:8443/a/b?…"),
        ("http://[::1]/hook", "http://[::1]/hook"),
        ("https://hooks.example/a", "https://hooks.example/a"),
        ("http://h.example:99999/x", "http://h.example/x"),
    ],
)
def test_redacted_urls(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@given(st.text(min_size=1, alphabet=st.sampled_from("abcXYZ0189-._~%")))
def test_redacted_urls_keep_no_query_or_user_info(secret: str) -> None:
    assert redact_url(f"https://u:{secret}@hooks.example/p?k={secret}") == "https://hooks.example/p?…"
    assert redact_url(f"https://{secret}@hooks.example/p") == "https://hooks.example/p"

"""Guessing slowed down (issue 32): wrong passwords, wrong admin tokens at sign-in and wrong
bearer tokens on the admin API count per client address and per account; growing waits, then a
lockout answered 429 with Retry-After, audited and logged; the right password works once it
ends; a noisy address does not lock a member of staff out of another address. The test clock
moves instead of the tests sleeping."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import structlog
from fastapi import FastAPI
from pydantic import SecretStr, ValidationError

from berth.app import create_app
from berth.container import Services, build_services
from berth.demo.loader import DEMO_ADMIN_TOKEN
from berth.domain.audit import AuditFilter
from berth.domain.proxies import client_address, proxy_networks
from berth.domain.staff import COMMAND_LINE, Role
from berth.settings import Settings
from tests.backoffice.helpers import csrf_of
from tests.conftest import ADMIN, Clock

ADDRESS_LIMIT, ACCOUNT_LIMIT, LOCKOUT = 6, 8, 60.0
NOISY, REAL = "203.0.113.7", "198.51.100.20"


@pytest.fixture
def settings(database_url: str) -> Settings:
    """The suite's settings, with small limits, and the test client's 127.0.0.1 as the proxy."""
    return Settings(
        database_url=database_url,
        admin_token=DEMO_ADMIN_TOKEN,
        log_level="WARNING",
        rate_limit_per_minute=0,
        trusted_proxies="127.0.0.1",
        guess_address_limit=ADDRESS_LIMIT,
        guess_account_limit=ACCOUNT_LIMIT,
        guess_delay_seconds=1,
        guess_lockout_seconds=LOCKOUT,
    )


async def staff_password(services: Services, email: str = "ana@example.com") -> str:
    _, password = await services.staff.create(email, Role.ADMIN, actor=COMMAND_LINE)
    return password


async def sign_in(
    client: httpx.AsyncClient, address: str, password: str, email: str = "ana@example.com"
) -> httpx.Response:
    client.cookies.clear()
    form = await client.get("/admin/sign-in")
    data = {"email": email, "password": password, "csrf_token": csrf_of(form.text)}
    return await client.post("/admin/sign-in", data=data, headers={"X-Forwarded-For": address})


async def lockouts(services: Services) -> list[tuple[str, str, str, int]]:
    entries, _ = await services.audit.search(AuditFilter(action="guessing.lockout"), 50, 0)
    return [(e.actor, e.target.kind, e.target.id, e.details["lockedSeconds"]) for e in entries]


async def test_a_noisy_address_waits_longer_then_is_locked_out(
    client: httpx.AsyncClient, services: Services, clock: Clock
) -> None:
    password = await staff_password(services)
    for _ in range(3):  # free
        assert (await sign_in(client, NOISY, "wrong password")).status_code == 401
    assert (await sign_in(client, NOISY, "wrong password")).status_code == 401
    waiting = await sign_in(client, NOISY, password)  # the right one, too soon: not even checked
    assert waiting.status_code == 429 and waiting.headers["Retry-After"] == "1"
    assert "Too many wrong passwords or tokens: try again in 1 s." in waiting.text
    clock.advance(seconds=1)
    assert (await sign_in(client, NOISY, "wrong password")).status_code == 401
    assert (await sign_in(client, NOISY, password)).headers["Retry-After"] == "2"  # doubled
    clock.advance(seconds=2)
    with structlog.testing.capture_logs() as logged:
        assert (await sign_in(client, NOISY, "wrong password")).status_code == 401  # the 6th
    locked = await sign_in(client, NOISY, password)
    assert locked.status_code == 429 and locked.headers["Retry-After"] == str(int(LOCKOUT))
    assert await lockouts(services) == [("Berth (guessing guard)", "address", NOISY, 60)]
    [line] = [e for e in logged if e["event"] == "locked out after wrong guesses"]
    assert (line["log_level"], line["kind"], line["name"], line["failures"]) == (
        "warning",
        "address",
        NOISY,
        6,
    )

    # The member signs in from their own address meanwhile: the noisy one did not lock the account.
    assert (await sign_in(client, REAL, password)).status_code == 303
    clock.advance(seconds=LOCKOUT - 1)
    assert (await sign_in(client, NOISY, password)).status_code == 429
    clock.advance(seconds=1)
    assert (await sign_in(client, NOISY, password)).status_code == 303  # the lockout is over


async def test_an_account_guessed_from_many_addresses_is_locked_out(
    client: httpx.AsyncClient, services: Services, clock: Clock
) -> None:
    password = await staff_password(services)
    spread = [f"192.0.2.{n}" for n in range(1, 5)]
    for address in spread[:3]:  # 2 failures each: no address waits
        for _ in range(2):
            assert (await sign_in(client, address, "wrong")).status_code == 401
    assert (await sign_in(client, spread[3], "wrong")).status_code == 401  # the 7th: the account waits
    assert (await sign_in(client, REAL, password)).headers["Retry-After"] == "1"
    clock.advance(seconds=1)
    assert (await sign_in(client, spread[3], "wrong")).status_code == 401  # the 8th locks the account
    refused = await sign_in(client, REAL, password)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    assert await lockouts(services) == [("Berth (guessing guard)", "account", "ana@example.com", 60)]
    # Other accounts are not locked, from any of these addresses.
    other = await staff_password(services, "bo@example.com")
    assert (await sign_in(client, spread[0], other, "bo@example.com")).status_code == 303
    clock.advance(seconds=LOCKOUT)
    assert (await sign_in(client, REAL, password)).status_code == 303
    # Signing in forgot the account's failures: one more wrong password costs nothing.
    assert (await sign_in(client, REAL, "wrong")).status_code == 401
    assert (await sign_in(client, REAL, password)).status_code == 303


async def test_wrong_admin_tokens_at_sign_in_count_too(
    client: httpx.AsyncClient, services: Services, clock: Clock
) -> None:
    for _ in range(ADDRESS_LIMIT):
        clock.advance(seconds=LOCKOUT / 2)  # past every wait, never past the forgetting
        assert (await sign_in(client, NOISY, "not-the-token", email="")).status_code == 401
    assert (await sign_in(client, NOISY, DEMO_ADMIN_TOKEN, email="")).status_code == 429
    assert (await sign_in(client, REAL, DEMO_ADMIN_TOKEN, email="")).status_code == 303
    assert await lockouts(services) == [("Berth (guessing guard)", "address", NOISY, 60)]


async def test_wrong_bearer_tokens_on_the_admin_api(
    client: httpx.AsyncClient, services: Services, clock: Clock
) -> None:
    def sent_from(address: str, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", "X-Forwarded-For": address}

    for guess in range(ADDRESS_LIMIT):
        clock.advance(seconds=LOCKOUT / 2)  # past every wait, never past the forgetting
        wrong = await client.get("/admin/api/me", headers=sent_from(NOISY, f"berth_staff_guess{guess}"))
        assert wrong.status_code == 400 and wrong.json()["error"] == "UNAUTHORIZED", wrong.text
    locked = await client.get("/admin/api/me", headers=sent_from(NOISY, DEMO_ADMIN_TOKEN))
    assert locked.status_code == 429 and locked.headers["Retry-After"] == "60"
    assert locked.json()["error"] == "TOO_MANY_REQUESTS" and locked.json()["retryAfter"] == 60
    assert (await client.get("/admin/api/me", headers=sent_from(REAL, DEMO_ADMIN_TOKEN))).status_code == 200
    assert (await client.get("/admin/api/me", headers=ADMIN)).status_code == 200  # 127.0.0.1 itself
    clock.advance(seconds=LOCKOUT)
    assert (await client.get("/admin/api/me", headers=sent_from(NOISY, DEMO_ADMIN_TOKEN))).status_code == 200
    assert await lockouts(services) == [("Berth (guessing guard)", "address", NOISY, 60)]


async def test_forwarded_addresses_from_an_untrusted_peer_are_ignored(
    settings: Settings, clock: Clock
) -> None:
    elsewhere = build_services(settings.model_copy(update={"trusted_proxies": "10.0.0.0/8"}), clock)
    transport = httpx.ASGITransport(app=create_app(services=elsewhere))  # from 127.0.0.1: no proxy now
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as client:
            for n in range(ADDRESS_LIMIT):  # each names another address: all count against 127.0.0.1
                clock.advance(seconds=LOCKOUT / 2)
                assert (await sign_in(client, f"192.0.2.{n}", "wrong", email="")).status_code == 401
            assert (await sign_in(client, "192.0.2.200", DEMO_ADMIN_TOKEN, email="")).status_code == 429
        assert await lockouts(elsewhere) == [("Berth (guessing guard)", "address", "127.0.0.1", 60)]
    finally:
        await elsewhere.close()


def test_the_client_address_behind_trusted_proxies() -> None:
    proxies = proxy_networks("127.0.0.1, 10.0.0.0/8, ::1")
    assert client_address("203.0.113.7", "198.51.100.1", proxies) == "203.0.113.7"  # not a proxy
    assert client_address("127.0.0.1", None, proxies) == "127.0.0.1"
    assert client_address("127.0.0.1", "198.51.100.1", proxies) == "198.51.100.1"
    # Each proxy appends what it saw: the last untrusted hop, not what the client wrote first.
    assert client_address("127.0.0.1", "1.2.3.4, 198.51.100.1, 10.1.2.3", proxies) == "198.51.100.1"
    assert client_address("127.0.0.1", "10.0.0.2", proxies) == "10.0.0.2"  # proxies all the way
    assert client_address("127.0.0.1", "198.51.100.1, not-an-address", proxies) == "127.0.0.1"
    with pytest.raises(ValueError, match=r"'example\.com' is not an IP address"):
        proxy_networks("example.com")


def test_an_account_limit_must_be_above_an_address_limit(database_url: str) -> None:
    with pytest.raises(ValidationError, match="BERTH_GUESS_ACCOUNT_LIMIT must be above"):
        Settings(database_url=database_url, guess_address_limit=10, guess_account_limit=10)
    with pytest.raises(ValidationError, match="not an IP address"):
        Settings(database_url=database_url, trusted_proxies="proxy.local")


async def test_processes_count_together(settings: Settings, clock: Clock, services: Services) -> None:
    """Two Berth processes on one database (two apps, each with its own engine and pool): the
    failures sent to each lock the address out of both."""
    other = build_services(settings, clock)
    apps = [create_app(services=services), create_app(services=other)]
    clients = [
        httpx.AsyncClient(transport=httpx.ASGITransport(app=a), base_url="http://berth.test") for a in apps
    ]
    try:
        for guess in range(ADDRESS_LIMIT):
            clock.advance(seconds=LOCKOUT / 2)
            headers = {"Authorization": f"Bearer wrong{guess}", "X-Forwarded-For": NOISY}
            assert (await clients[guess % 2].get("/admin/api/me", headers=headers)).status_code == 400
        for client in clients:
            headers = {"Authorization": f"Bearer {DEMO_ADMIN_TOKEN}", "X-Forwarded-For": NOISY}
            assert (await client.get("/admin/api/me", headers=headers)).status_code == 429
    finally:
        for client in clients:
            await client.aclose()
        await other.close()


# --- what a guesser cannot take from the staff (issue 39) -----------------------------------------

LONG_ADMIN_TOKEN = "k" * 44  # as `openssl rand -base64 32` makes one


async def lock_out(client: httpx.AsyncClient, clock: Clock, address: str) -> None:
    """ADDRESS_LIMIT wrong bearer tokens from `address`: it is locked out."""
    for guess in range(ADDRESS_LIMIT):
        clock.advance(seconds=LOCKOUT / 2)  # past every wait, never past the forgetting
        headers = {"Authorization": f"Bearer berth_staff_guess{guess}", "X-Forwarded-For": address}
        assert (await client.get("/admin/api/me", headers=headers)).status_code == 400


async def test_a_right_api_token_is_accepted_at_an_address_others_locked_out(
    client: httpx.AsyncClient, services: Services, clock: Clock
) -> None:
    """Staff tokens are 256 random bits, a long admin token as good: the right one is no guess,
    whatever other clients behind the same address sent. Wrong ones stay throttled, and a short
    admin token (the demo's) stays behind the lockout like a password."""
    await services.staff.create("ana@example.com", Role.OPERATOR, actor=COMMAND_LINE)
    _, token = await services.staff.issue_token("ana@example.com", actor=COMMAND_LINE)
    await lock_out(client, clock, NOISY)

    def sent(secret: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {secret}", "X-Forwarded-For": NOISY}

    staff_answer = await client.get("/admin/api/me", headers=sent(token))
    assert staff_answer.status_code == 200 and staff_answer.json()["name"] == "ana@example.com"
    wrong = await client.get("/admin/api/me", headers=sent("berth_staff_another-guess"))
    assert wrong.status_code == 429 and wrong.json()["error"] == "TOO_MANY_REQUESTS"
    assert (await client.get("/admin/api/me", headers=sent(DEMO_ADMIN_TOKEN))).status_code == 429
    services.settings.admin_token = SecretStr(LONG_ADMIN_TOKEN)
    assert (await client.get("/admin/api/me", headers=sent(LONG_ADMIN_TOKEN))).status_code == 200
    assert (await client.get("/admin/api/me", headers=sent("k" * 43))).status_code == 429


async def browser_sign_in(
    client: httpx.AsyncClient, address: str, password: str, email: str = "ana@example.com"
) -> httpx.Response:
    """A sign-in from a browser that keeps its cookies (the session's is dropped, as after
    signing out; the device cookie stays)."""
    client.cookies.delete("berth_session", path="/admin")
    form = await client.get("/admin/sign-in")
    data = {"email": email, "password": password, "csrf_token": csrf_of(form.text)}
    return await client.post("/admin/sign-in", data=data, headers={"X-Forwarded-For": address})


async def test_a_browser_that_signed_in_before_is_not_locked_out_by_unknown_clients(
    app: FastAPI, client: httpx.AsyncClient, services: Services, clock: Clock
) -> None:
    password = await staff_password(services)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://berth.test") as own:
        signed = await browser_sign_in(own, REAL, password)
        assert signed.status_code == 303 and "berth_device" in signed.cookies
        # Unknown clients behind the member's own address (one proxy, one office) guess until
        # both the address and the account are locked out.
        for n in range(ACCOUNT_LIMIT):
            clock.advance(seconds=LOCKOUT / 4)
            refused = await sign_in(client, REAL if n < ADDRESS_LIMIT else f"192.0.2.{n}", "wrong")
            assert refused.status_code in (401, 429)
        # An unknown client is refused, whether its password is right or wrong: guessing stops.
        assert (await sign_in(client, REAL, password)).status_code == 429
        assert (await sign_in(client, "192.0.2.250", password)).status_code == 429
        assert (await sign_in(client, "192.0.2.251", "wrong")).status_code == 429
        # The member's own browser, known by its device cookie, signs in from the same address.
        assert (await browser_sign_in(own, REAL, password)).status_code == 303
        # Its own wrong passwords count against it alone, and lock it out in the end.
        for _ in range(ACCOUNT_LIMIT):
            clock.advance(seconds=LOCKOUT / 4)
            assert (await browser_sign_in(own, REAL, "wrong")).status_code in (401, 429)
        assert (await browser_sign_in(own, REAL, password)).status_code == 429
        kinds = {kind for _, kind, _, _ in await lockouts(services)}
        assert kinds == {"address", "account", "device"}


async def test_a_device_cookie_of_another_account_or_forged_is_an_unknown_client(
    app: FastAPI, client: httpx.AsyncClient, services: Services, clock: Clock
) -> None:
    password = await staff_password(services)
    other = await staff_password(services, "bo@example.com")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://berth.test") as own:
        assert (await browser_sign_in(own, REAL, other, "bo@example.com")).status_code == 303
        for _ in range(ACCOUNT_LIMIT):  # ana's account locked out by unknown clients
            clock.advance(seconds=LOCKOUT / 4)
            await sign_in(client, f"192.0.2.{_}", "wrong")
        # bo's browser knows bo, not ana; a made-up cookie is no device either.
        assert (await browser_sign_in(own, REAL, password)).status_code == 429
        own.cookies.set("berth_device", "made.up", path="/admin/sign-in")
        assert (await browser_sign_in(own, REAL, password)).status_code == 429


async def test_forwarded_addresses_from_an_untrusted_peer_are_warned_of_once(
    settings: Settings, clock: Clock
) -> None:
    untrusting = build_services(settings.model_copy(update={"trusted_proxies": ""}), clock)
    transport = httpx.ASGITransport(app=create_app(services=untrusting))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as client:
            with structlog.testing.capture_logs() as logged:
                for address in (NOISY, REAL):
                    headers = {**ADMIN, "X-Forwarded-For": address}
                    assert (await client.get("/admin/api/me", headers=headers)).status_code == 200
                await client.get("/admin/api/me", headers=ADMIN)  # no header: nothing to warn of
        [warning] = [e for e in logged if "X-Forwarded-For" in e["event"]]
        assert warning["log_level"] == "warning" and warning["peer"] == "127.0.0.1"
        assert "BERTH_TRUSTED_PROXIES" in warning["event"]
    finally:
        await untrusting.close()


async def test_a_trusted_proxy_is_not_warned_of(client: httpx.AsyncClient) -> None:
    with structlog.testing.capture_logs() as logged:
        headers = {**ADMIN, "X-Forwarded-For": NOISY}
        assert (await client.get("/admin/api/me", headers=headers)).status_code == 200
    assert [e for e in logged if "X-Forwarded-For" in e["event"]] == []


def test_the_install_guides_environment_file_names_the_trusted_proxy() -> None:
    guide = (Path(__file__).parent.parent / "docs" / "operations.md").read_text()
    env_file = guide[guide.index("# /etc/berth/berth.env") :].split("```")[0]
    assert "\nBERTH_TRUSTED_PROXIES=127.0.0.1\n" in env_file

"""Signing in to the back office: session cookie, CSRF, sign-out, a disabled admin token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from pydantic import SecretStr

from berth.app import create_app
from berth.container import Services, build_services
from berth.settings import Settings
from tests.backoffice.helpers import csrf_of, sign_in, text_of
from tests.conftest import Clock


@asynccontextmanager
async def client_for(
    settings: Settings, clock: Clock, base_url: str = "http://berth.test"
) -> AsyncIterator[httpx.AsyncClient]:
    built = build_services(settings, clock)
    transport = httpx.ASGITransport(app=create_app(services=built), raise_app_exceptions=False)
    try:
        async with httpx.AsyncClient(transport=transport, base_url=base_url) as http:
            yield http
    finally:
        await built.close()


async def test_pages_send_strangers_to_sign_in_and_back(client: httpx.AsyncClient, office: Services) -> None:
    wanted = await client.get("/admin/bookings", params={"status": "PENDING"})
    assert wanted.status_code == 303
    assert wanted.headers["location"] == "/admin/sign-in?next=/admin/bookings%3Fstatus%3DPENDING"
    form = await client.get(wanted.headers["location"])
    assert form.status_code == 200
    assert 'name="next" value="/admin/bookings?status=PENDING"' in form.text
    signed_in = await client.post(
        "/admin/sign-in",
        data={
            "password": "demo-admin",
            "csrf_token": csrf_of(form.text),
            "next": "/admin/bookings?status=PENDING",
        },
    )
    assert signed_in.status_code == 303
    assert signed_in.headers["location"] == "/admin/bookings?status=PENDING"
    assert (await client.get("/admin/bookings?status=PENDING")).status_code == 200
    # Signed in, the sign-in page goes straight on.
    again = await client.get("/admin/sign-in", params={"next": "/admin/catalog"})
    assert again.status_code == 303 and again.headers["location"] == "/admin/catalog"


async def test_session_cookie_is_http_only_same_site_and_scoped(
    client: httpx.AsyncClient, office: Services
) -> None:
    form = await client.get("/admin/sign-in")
    response = await client.post(
        "/admin/sign-in", data={"password": "demo-admin", "csrf_token": csrf_of(form.text)}
    )
    cookie = response.headers["set-cookie"].lower()
    assert cookie.startswith("berth_session=")
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/admin" in cookie
    assert "secure" not in cookie


async def test_cookies_are_secure_when_the_public_url_is_https(
    settings: Settings, clock: Clock, office: Services
) -> None:
    https = settings.model_copy(update={"public_url": "https://tours.example"})
    async with client_for(https, clock, "https://berth.test") as http:
        form = await http.get("/admin/sign-in")
        assert "secure" in form.headers["set-cookie"].lower()
        response = await http.post(
            "/admin/sign-in", data={"password": "demo-admin", "csrf_token": csrf_of(form.text)}
        )
        assert response.status_code == 303
        assert "secure" in response.headers["set-cookie"].lower()


async def test_a_wrong_token_is_refused(client: httpx.AsyncClient, office: Services) -> None:
    form = await client.get("/admin/sign-in")
    response = await client.post(
        "/admin/sign-in", data={"password": "guess", "csrf_token": csrf_of(form.text)}
    )
    assert response.status_code == 401
    assert "the password must be the admin token" in text_of(response.text)
    assert (await client.get("/admin")).status_code == 303


async def test_the_sign_in_form_needs_its_csrf_token(client: httpx.AsyncClient, office: Services) -> None:
    await client.get("/admin/sign-in")
    forged = await client.post("/admin/sign-in", data={"password": "demo-admin", "csrf_token": "forged"})
    assert forged.status_code == 403
    assert "The sign-in form had expired" in text_of(forged.text)
    assert (await client.get("/admin")).status_code == 303
    # A form shown to a browser without any session cookie is refused the same way.
    client.cookies.clear()
    assert (await client.post("/admin/sign-in", data={"password": "demo-admin"})).status_code == 403


async def test_tampered_and_expired_sessions_sign_out(
    client: httpx.AsyncClient, office: Services, clock: Clock
) -> None:
    await sign_in(client)
    genuine = client.cookies["berth_session"]
    payload, _, signature = genuine.partition(".")
    client.cookies.set("berth_session", payload + "." + signature[::-1], path="/admin")
    assert (await client.get("/admin")).status_code == 303
    client.cookies.set("berth_session", genuine, path="/admin")
    assert (await client.get("/admin")).status_code == 200
    clock.advance(hours=12)
    assert (await client.get("/admin")).status_code == 303


async def test_changing_the_admin_token_signs_everyone_out(
    client: httpx.AsyncClient, settings: Settings, clock: Clock, office: Services
) -> None:
    await sign_in(client)
    rotated = settings.model_copy(update={"admin_token": SecretStr("a-new-token")})
    async with client_for(rotated, clock) as http:
        http.cookies = client.cookies
        assert (await http.get("/admin")).status_code == 303


async def test_sign_out_needs_the_csrf_token(client: httpx.AsyncClient, office: Services) -> None:
    csrf = await sign_in(client)
    refused = await client.post("/admin/sign-out")
    assert refused.status_code == 403
    assert "This form has expired" in text_of(refused.text)
    assert (await client.get("/admin")).status_code == 200
    out = await client.post("/admin/sign-out", data={"csrf_token": csrf})
    assert out.status_code == 303 and out.headers["location"] == "/admin/sign-in?signed_out"
    assert (await client.get("/admin")).status_code == 303
    assert "You have signed out" in text_of((await client.get(out.headers["location"])).text)


async def test_a_csrf_token_works_only_in_its_own_session(
    client: httpx.AsyncClient, office: Services
) -> None:
    old = await sign_in(client)
    await client.post("/admin/sign-out", data={"csrf_token": old})
    new = await sign_in(client)
    assert new != old
    stale = await client.post("/admin/connections", data={"name": "Stale form", "csrf_token": old})
    assert stale.status_code == 403
    assert "Stale form" not in (await client.get("/admin/connections")).text


async def test_after_sign_in_only_back_office_pages(client: httpx.AsyncClient, office: Services) -> None:
    for target in ("//evil.example/admin", "https://evil.example", "/octo/products", "/admin\\@evil.example"):
        form = await client.get("/admin/sign-in")
        response = await client.post(
            "/admin/sign-in",
            data={"password": "demo-admin", "csrf_token": csrf_of(form.text), "next": target},
        )
        assert response.headers["location"] == "/admin", target
        await client.post("/admin/sign-out", data={"csrf_token": csrf_of((await client.get("/admin")).text)})


async def test_without_an_admin_token_the_back_office_says_how_to_enable_it(
    settings: Settings, clock: Clock
) -> None:
    disabled = settings.model_copy(update={"admin_token": None})
    async with client_for(disabled, clock) as http:
        for response in (
            await http.get("/admin"),
            await http.get("/admin/sign-in"),
            await http.post("/admin/sign-in", data={"password": "demo-admin"}),
            await http.get("/admin/bookings"),
        ):
            assert response.status_code == 403
            assert "The back office is disabled" in text_of(response.text)
            assert "BERTH_ADMIN_TOKEN" in response.text

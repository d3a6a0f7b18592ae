"""The back office's webhooks section: every connection's webhooks with their pending and
failed deliveries, one webhook's deliveries, one delivery with its attempts; redelivering and
rotating a signing secret. Real receivers on loopback, the real worker driven with the test clock."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import httpx
import pytest

from berth.container import Services
from berth.http.admin.pages import webhooks as webhook_pages
from tests.backoffice.helpers import notice_of, sign_in, text_of
from tests.bookings_helpers import SLOT, confirm, reservation, reserve
from tests.conftest import ADMIN, KEY_B, SECRET_A, Clock
from tests.receivers import receiver
from tests.test_webhooks import drain, subscribe, verify


async def book(
    client: httpx.AsyncClient, key: str = "demo-reseller-a", availability_id: str = SLOT
) -> dict[str, Any]:
    """A confirmed booking: one booking_update for the connection's webhooks."""
    booking = await reserve(client, reservation(availability_id=availability_id), key=key)
    assert (await confirm(client, booking["uuid"], key=key)).status_code == 200
    return booking


async def deliveries_of(client: httpx.AsyncClient, webhook_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/admin/api/webhooks/{webhook_id}/deliveries", headers=ADMIN)
    found: list[dict[str, Any]] = response.json()["deliveries"]
    return found


async def connection_id(client: httpx.AsyncClient, name: str) -> str:
    connections = (await client.get("/admin/api/connections", headers=ADMIN)).json()
    found: str = next(c["id"] for c in connections if c["name"] == name)
    return found


def rows_of(page: str, table: str) -> list[str]:
    """The visible text of each body row of the table with this class."""
    body = re.search(rf'<table class="{table}">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert body is not None, f"no table {table!r} on the page"
    return [text_of(row) for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)]


async def test_without_webhooks_the_page_says_how_resellers_make_them(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    page = await client.get("/admin/webhooks")
    assert page.status_code == 200
    assert '<a href="/admin/webhooks" aria-current="page">Webhooks</a>' in page.text
    text = text_of(page.text)
    assert "No webhooks yet" in text
    assert "Resellers create webhooks with POST http://berth.test/octo/webhooks" in text
    assert 'href="/admin/connections"' in page.text


async def test_every_connections_webhooks_with_their_pending_and_failed_deliveries(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock
) -> None:
    async with (
        receiver(default_status=500) as failing,
        receiver(default_status=200) as fine,
        receiver(410) as gone,
    ):
        disabled = await subscribe(client, gone.url, key=KEY_B, event="booking.updated")
        clock.advance(seconds=1)
        once = await subscribe(client, failing.url, retryOnError=False, capabilities="octo/pricing")
        clock.advance(seconds=1)
        retried = await subscribe(client, failing.url + "/retried")
        clock.advance(seconds=1)
        delivered = await subscribe(client, fine.url, key=KEY_B, event="booking_update")
        await book(client)
        await book(client)
        await book(client, key=KEY_B)
        await drain(office)

        page = await client.get("/admin/webhooks")
        text = text_of(page.text)
        assert "Webhooks 4 Pending deliveries 2 Failed deliveries 3" in text
        rows = rows_of(page.text, "webhooks")
        # Each row: event, connection and URL (the phone's first cell), then the wide columns.
        assert rows == [
            f"booking_update Reseller A {failing.url} {failing.url} Reseller A octo/pricing No ACTIVE 0 2",
            f"booking_update Reseller A {retried['url']} {retried['url']} Reseller A none Yes ACTIVE 2 0",
            f"booking_update Reseller B {gone.url} {gone.url} Reseller B none Yes DISABLED "
            "the receiver answered 410 Gone 1 Jun 2026 09:00 BST 0 1",
            f"booking_update Reseller B {fine.url} {fine.url} Reseller B none Yes ACTIVE 0 0",
        ]
        assert f'href="/admin/webhooks/{once["id"]}?status=failed"' in page.text
        assert f'href="/admin/webhooks/{retried["id"]}?status=pending"' in page.text
        assert f'href="/admin/webhooks/{delivered["id"]}"' in page.text
        assert f'href="/admin/webhooks/{disabled["id"]}"' in page.text

        reseller_b = await connection_id(client, "Reseller B")
        only_b = await client.get("/admin/webhooks", params={"connection": reseller_b})
        assert len(rows_of(only_b.text, "webhooks")) == 2
        assert "2 webhooks of Reseller B" in text_of(only_b.text)
        nobody = text_of((await client.get("/admin/webhooks", params={"connection": "nope"})).text)
        assert "This connection has no webhooks" in nobody and "Show every connection's webhooks" in nobody

        listing = await client.get("/admin/connections")
        assert f'<a href="/admin/webhooks?connection={reseller_b}">2</a>' in listing.text


async def test_a_webhooks_deliveries_newest_first_by_status_and_paginated(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhook_pages, "PAGE_SIZE", 2)
    async with receiver(200, 500, 200, default_status=500) as target:
        hook = await subscribe(client, target.url, retryOnError=False)
        references = []
        for _ in range(4):
            references.append((await book(client))["supplierReference"])
            await drain(office)
            clock.advance(minutes=1)
        path = f"/admin/webhooks/{hook['id']}"

        first = await client.get(path)
        text = text_of(first.text)
        assert "Webhook booking_update Reseller A ACTIVE" in text
        assert f"URL {target.url}" in text and "Retry on error No: one attempt each" in text
        assert "Deliveries 4 All 4 Pending 0 Sending 0 Delivered 2 Failed 2" in text
        assert "4 deliveries, 1-2 shown, newest first" in text and "Page 1 of 2" in text
        assert rows_of(first.text, "deliveries") == [
            f"1 Jun 2026 09:03 BST Booking {references[3]} Booking {references[3]} FAILED HTTP 500 1 attempt "
            "gave up Redeliver",
            f"1 Jun 2026 09:02 BST Booking {references[2]} Booking {references[2]} DELIVERED 200 1 attempt "
            "delivered 1 Jun 2026 09:02 BST",
        ]
        second = await client.get(path, params={"page": "2"})
        assert [row.split(" ")[6] for row in rows_of(second.text, "deliveries")] == [
            references[1],
            references[0],
        ]
        assert f'href="{path}?page=2"' in first.text

        failed = await client.get(path, params={"status": "failed"})
        assert [row.split(" ")[6] for row in rows_of(failed.text, "deliveries")] == [
            references[3],
            references[1],
        ]
        assert "2 failed deliveries, newest first" in text_of(failed.text)
        assert f'<a href="{path}?status=failed" aria-current="page">' in failed.text
        pending = text_of((await client.get(path, params={"status": "pending"})).text)
        assert "No pending deliveries. Show every delivery" in pending
        beyond = text_of((await client.get(path, params={"page": "5"})).text)
        assert "No deliveries on this page: go to the first page" in beyond
        bad = text_of((await client.get(path, params={"status": "lost"})).text)
        assert "'lost' is not a delivery status" in bad


async def test_a_webhook_without_deliveries_says_when_it_gets_them(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    hook = await subscribe(client, "https://hooks.example/a", event="availability_update")
    text = text_of((await client.get(f"/admin/webhooks/{hook['id']}")).text)
    assert "Nothing sent yet. Berth makes a delivery for this webhook when a departure's status" in text
    missing = await client.get("/admin/webhooks/nope")
    assert missing.status_code == 404 and "No webhook with id 'nope'" in text_of(missing.text)


async def test_a_delivery_with_its_payload_headers_and_attempts_redelivered(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    async with receiver(500) as target:
        hook = await subscribe(client, target.url, headers={"X-Reseller-Token": "t0k3n"})
        booking = await book(client)
        await drain(office)
        (delivery,) = await deliveries_of(client, hook["id"])
        assert delivery["status"] == "pending"  # retried in a minute on the test schedule
        path = f"/admin/deliveries/{delivery['id']}"

        listing = await client.get(f"/admin/webhooks/{hook['id']}")
        (row,) = rows_of(listing.text, "deliveries")
        reference = booking["supplierReference"]
        assert row.startswith(
            f"1 Jun 2026 09:00 BST Booking {reference} Booking {reference} RETRYING HTTP 500"
        )
        assert "Retry on error Yes: up to 4 attempts over 7 minutes" in text_of(listing.text)
        assert "1 attempt retry 1 Jun 2026 09:0" in row and row.endswith("Redeliver")
        assert f'href="{path}"' in listing.text

        page = await client.get(path)
        text = text_of(page.text)
        assert f"Delivery booking_update · Booking {booking['supplierReference']} RETRYING" in text
        assert f"About Booking {booking['supplierReference']}" in text
        assert f'href="/admin/bookings/{booking["id"]}"' in page.text
        assert f"URL {target.url}" in text and "Connection Reseller A" in text
        assert "Attempts 1" in text and "500" in text and "answered 500" in text and " ms" in text
        headers = rows_of(page.text, "headers")
        assert headers[:3] == [
            "Content-Type application/json",
            "User-Agent Berth-Webhooks/1",
            f"webhook-id {delivery['id']} the same on every attempt and redelivery",
        ]
        assert headers[-1] == "X-Reseller-Token t0k3n"
        payload = html.unescape(page.text.split('<pre class="json">')[1].split("</pre>")[0])
        assert json.loads(payload)["booking"]["id"] == booking["id"]
        assert '\n  "event": "booking_update",\n' in payload  # pretty-printed

        response = await client.post(f"{path}/redeliver", data={"csrf_token": csrf})
        assert response.status_code == 303 and response.headers["location"] == path
        shown = await client.get(path)
        next_attempt = re.search(r"Next attempt (1 Jun 2026 09:\d\d):\d\d BST", text)
        assert next_attempt is not None
        retry_at = next_attempt.group(1) + " BST"
        assert notice_of(shown.text) == (
            f"Delivery {delivery['id']} (booking_update of Booking {booking['supplierReference']}) "
            f"requeued; it was waiting for a retry at {retry_at} after 1 attempt. "
            f"It goes to {target.url} again now, with the same webhook-id."
        )
        assert "PENDING" in text_of(shown.text)
        await drain(office)
        assert [r.headers["webhook-id"] for r in target.requests] == [delivery["id"]] * 2
        after = await client.get(path)
        assert notice_of(after.text) is None  # shown once
        attempts = rows_of(after.text, "attempts")
        assert len(attempts) == 2
        assert attempts[0].startswith("1 Jun 2026 09:00:00 BST 200") and "answered 200" in attempts[0]
        assert attempts[1].startswith("1 Jun 2026 09:00:00 BST 500") and "answered 500" in attempts[1]
        assert "DELIVERED" in text_of(after.text)
        missing = await client.get("/admin/deliveries/nope")
        assert missing.status_code == 404 and "No delivery with id 'nope'" in text_of(missing.text)


async def test_redeliver_from_the_webhook_page_goes_back_to_it(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    async with receiver(500) as target:
        hook = await subscribe(client, target.url, retryOnError=False)
        await book(client)
        await drain(office)
        (delivery,) = await deliveries_of(client, hook["id"])
        assert delivery["status"] == "failed"
        response = await client.post(
            f"/admin/deliveries/{delivery['id']}/redeliver", data={"csrf_token": csrf, "back": "webhook"}
        )
        assert response.headers["location"] == f"/admin/webhooks/{hook['id']}"
        page = await client.get(response.headers["location"])
        assert "requeued; it had failed after 1 attempt. It goes to" in (notice_of(page.text) or "")
        assert "PENDING" in rows_of(page.text, "deliveries")[0]
        await drain(office)
        assert len(target.requests) == 2
        (delivered,) = await deliveries_of(client, hook["id"])
        assert delivered["status"] == "delivered"


async def test_redeliver_everything_since_a_time(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock
) -> None:
    async with receiver() as target:
        hook = await subscribe(client, target.url)
        await book(client)
        clock.advance(hours=2)
        await book(client)
        await book(client)
        await drain(office)
        assert len(target.requests) == 3
        path = f"/admin/webhooks/{hook['id']}"
        form = await client.get(path)
        assert 'name="since" value="2026-05-31 11:00"' in form.text and "datetime-local" not in form.text
        assert "Redeliver everything made since (Europe/London time, BST)" in text_of(form.text)

        async def since(value: str) -> str:
            response = await client.post(f"{path}/redeliver", data={"since": value, "csrf_token": csrf})
            assert response.status_code == 303 and response.headers["location"] == path
            notice = notice_of((await client.get(path)).text)
            assert notice is not None
            return notice

        assert await since("2026-06-01T10:00") == (
            f"2 deliveries made since 1 Jun 2026 10:00 BST requeued: they go to {target.url} again now, "
            "each with its original webhook-id."
        )
        await drain(office)
        assert len(target.requests) == 5
        assert {r.headers["webhook-id"] for r in target.requests[3:]} < {
            r.headers["webhook-id"] for r in target.requests[:3]
        }
        assert (await since("2026-06-01T10:30:00+02:00")).startswith(
            "2 deliveries made since 1 Jun 2026 09:30 BST"
        )
        assert await since("2026-07-01T00:00") == (
            "No delivery of this webhook was made since 1 Jul 2026 00:00 BST: nothing was requeued."
        )
        assert await since("yesterday") == (
            "Nothing was requeued: 'yesterday' is not a time like 2026-06-01T09:00 (Europe/London time)."
        )
        await drain(office)
        assert len(target.requests) == 7


async def test_webhook_actions_need_the_csrf_token_and_a_session(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    async with receiver(default_status=500) as target:
        hook = await subscribe(client, target.url, retryOnError=False)
        await book(client)
        await drain(office)
        (delivery,) = await deliveries_of(client, hook["id"])
        reseller_a = await connection_id(client, "Reseller A")
        actions = [
            (f"/admin/deliveries/{delivery['id']}/redeliver", {}),
            (f"/admin/webhooks/{hook['id']}/redeliver", {"since": "2026-01-01T00:00"}),
            (f"/admin/connections/{reseller_a}/rotate-secret", {}),
        ]
        for path, form in actions:
            for token in ({}, {"csrf_token": "forged"}, {"csrf_token": csrf[:-1]}):
                refused = await client.post(path, data={**form, **token})
                assert refused.status_code == 403, path
                assert "Nothing was changed" in text_of(refused.text)
                assert "whsec_" not in refused.text
        client.cookies.clear()
        for path, form in actions:
            stranger = await client.post(path, data={**form, "csrf_token": csrf})
            assert stranger.status_code == 303 and stranger.headers["location"].startswith("/admin/sign-in")
        for page in (
            "/admin/webhooks",
            f"/admin/webhooks/{hook['id']}",
            f"/admin/deliveries/{delivery['id']}",
        ):
            anonymous = await client.get(page)
            assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/admin/sign-in")
        await drain(office)
        assert len(target.requests) == 1  # nothing was requeued
        assert (await deliveries_of(client, hook["id"]))[0]["status"] == "failed"
        await sign_in(client)
        for path, _ in actions[:2]:
            missing = path.replace(delivery["id"], "nope").replace(hook["id"], "nope")
            response = await client.post(missing, data={"csrf_token": csrf, "since": "2026-01-01T00:00"})
            assert response.status_code in (403, 404)


async def test_rotate_a_signing_secret_shows_it_once(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock
) -> None:
    reseller_a = await connection_id(client, "Reseller A")
    listing = await client.get("/admin/connections")
    assert f'action="/admin/connections/{reseller_a}/rotate-secret"' in listing.text
    response = await client.post(f"/admin/connections/{reseller_a}/rotate-secret", data={"csrf_token": csrf})
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    found = re.search(r'<code id="rotated-secret" class="break">(whsec_[^<]+)</code>', response.text)
    assert found is not None
    secret = found.group(1)
    text = text_of(response.text)
    assert "Signing secret of “Reseller A” rotated" in text
    assert "Until 2 Jun 2026 09:00 BST they also carry a signature made with the previous secret" in text
    assert secret not in (await client.get("/admin/connections")).text

    async with receiver() as target:
        await subscribe(client, target.url)
        await book(client)
        await drain(office)
        (received,) = target.requests
        verify(secret, received)
        verify(SECRET_A, received)  # the grace period
        clock.advance(hours=25)  # the grace period is over (and the session too)
        await book(client, availability_id="2026-06-04T10:00:00+01:00")
        await drain(office)
        later = target.requests[1]
        verify(secret, later)
        assert len(later.headers["webhook-signature"].split()) == 1

    csrf = await sign_in(client)
    await client.post(f"/admin/connections/{reseller_a}/revoke", data={"csrf_token": csrf})
    revoked = await client.post(f"/admin/connections/{reseller_a}/rotate-secret", data={"csrf_token": csrf})
    assert revoked.status_code == 303
    page = await client.get("/admin/connections")
    assert notice_of(page.text) == "Connection “Reseller A” is revoked: its signing secret was not rotated."
    missing = await client.post("/admin/connections/nope/rotate-secret", data={"csrf_token": csrf})
    assert missing.status_code == 404


async def test_the_webhooks_list_paginates(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhook_pages, "PAGE_SIZE", 2)
    for name in ("a", "b", "c"):
        await subscribe(client, f"https://hooks.example/{name}")
        clock.advance(seconds=1)
    first = await client.get("/admin/webhooks")
    assert "Page 1 of 2" in text_of(first.text) and 'href="/admin/webhooks?page=2"' in first.text
    assert [row.split(" ")[4] for row in rows_of(first.text, "webhooks")] == [
        "https://hooks.example/a",
        "https://hooks.example/b",
    ]
    second = await client.get("/admin/webhooks", params={"page": "2"})
    assert [row.split(" ")[4] for row in rows_of(second.text, "webhooks")] == ["https://hooks.example/c"]
    beyond = text_of((await client.get("/admin/webhooks", params={"page": "3"})).text)
    assert "No webhooks on this page" in beyond and "go to the first page" in beyond


def test_retry_spans_read_as_people_say_them() -> None:
    assert webhook_pages.duration(420) == "7 minutes"
    assert webhook_pages.duration(3600) == "1 hour"
    assert webhook_pages.duration(90) == "about 2 minutes"
    assert webhook_pages.duration(45) == "45 seconds"
    default = "5,60,300,1800,7200,18000,36000,43200,43200,43200,43200,43200"
    assert webhook_pages.duration(sum(float(s) for s in default.split(","))) == "about 3 days"

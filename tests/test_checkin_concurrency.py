"""Two phones scanning the same ticket at the same moment admit it once: real `berth serve`
processes (two of them, on SQLite's file and on PostgreSQL), every ticket scanned by both at
once, and each scan sent twice with its nonce as a retry would."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from berth.container import Services
from berth.store.tables import admissions, checkin_scans
from tests.berth_process import berth_serve
from tests.bookings_helpers import GUEST, TOUR, booking_catalog, reservation
from tests.builders import load
from tests.conftest import ADMIN, auth
from tests.test_multi_process import departure, troubles

SLOT = departure(16)
GATE = {**TOUR, "availabilityId": SLOT}
PARTIES = 6  # of three tickets each: 18 tickets, each scanned by voucher or ticket
SETTINGS = {
    "BERTH_ADMIN_TOKEN": ADMIN["Authorization"].removeprefix("Bearer "),
    "BERTH_RATE_LIMIT_PER_MINUTE": "0",
}


async def confirmed_party(client: httpx.AsyncClient) -> dict[str, Any]:
    held = await client.post(
        "/octo/bookings", json=reservation(("adult", "adult", "adult"), SLOT), headers=auth()
    )
    assert held.status_code == 200, held.text
    done = await client.post(
        f"/octo/bookings/{held.json()['uuid']}/confirm", json={"contact": GUEST}, headers=auth()
    )
    assert done.status_code == 200, done.text
    result: dict[str, Any] = done.json()
    return result


async def test_two_phones_on_two_servers_admit_each_ticket_once(
    services: Services, database_url: str, tmp_path: Path
) -> None:
    await load(services, booking_catalog())
    with (
        berth_serve(database_url, log=tmp_path / "process-0.log", **SETTINGS) as first_url,
        berth_serve(database_url, log=tmp_path / "process-1.log", **SETTINGS) as second_url,
    ):
        async with (
            httpx.AsyncClient(base_url=first_url, timeout=60) as first,
            httpx.AsyncClient(base_url=second_url, timeout=60) as second,
        ):
            parties = [await confirmed_party(first) for _ in range(PARTIES)]
            # Half the parties by voucher (one code, every ticket), half ticket by ticket.
            codes = [p["supplierReference"] for p in parties[: PARTIES // 2]] + [
                item["supplierReference"] for p in parties[PARTIES // 2 :] for item in p["unitItems"]
            ]
            scans = []
            for code in codes:
                for phone, client in enumerate((first, second)):
                    body = {
                        "code": code,
                        "nonce": uuid.uuid4().hex,
                        "departure": GATE,
                        "device": f"phone-{phone}",
                        "admitAnotherDay": True,  # the departure is days ahead: staff admit anyway
                    }
                    scans.append(client.post("/admin/api/checkin", json=body, headers=ADMIN))
                    # The same scan again at once, as a phone retrying on a bad connection does.
                    scans.append(client.post("/admin/api/checkin", json=body, headers=ADMIN))
            answers = await asyncio.gather(*scans)
    assert [a.status_code for a in answers] == [200] * len(answers), [
        a.text for a in answers if a.status_code != 200
    ]
    results = Counter(a.json()["result"] for a in answers)
    admitted = Counter(uuid for a in answers if not a.json()["replayed"] for uuid in a.json()["admitted"])
    tickets = PARTIES * 3
    async with services.database.transaction(write=False) as conn:
        stored = await conn.scalar(select(func.count()).select_from(admissions))
        kept_scans = await conn.scalar(select(func.count()).select_from(checkin_scans))
    print(
        f"\ncheck-in race ({services.database.dialect}): {len(answers)} scans sent at once through two "
        f"servers ({len(codes)} codes, each by two phones, each scan twice with its nonce) for "
        f"{tickets} tickets: {results['ADMITTED']} ADMITTED answers ({len(admitted)} tickets admitted, "
        f"{stored} admission rows), {results['ALREADY_ADMITTED']} ALREADY_ADMITTED, "
        f"duplicates {sum(n - 1 for n in admitted.values())}"
    )
    assert len(admitted) == tickets and set(admitted.values()) == {1}  # no ticket admitted twice
    assert stored == tickets
    assert kept_scans == len(codes)  # one per scan that admitted, though each was sent twice
    # Per code, one phone's scan admits and the other's is ALREADY_ADMITTED (each answered the same twice).
    assert results["ADMITTED"] == len(codes) * 2 and results["ALREADY_ADMITTED"] == len(codes) * 2
    assert troubles(tmp_path) == []

"""Tenant isolation: one connection can neither see nor change what another one owns.

The matrix below lists every OCTO route that takes the id of something a connection owns. For
each, reseller A sends reseller B's id, then an id that does not exist: the two answers must be
the same (status, error code, and the whole body once the id itself is blanked out), and B's
view of its own things must be the same before and after. Routes added by later capabilities
get their rows in PROBES (see the marked places) and, if they own new kinds of things, an entry
in `Owned` and `_owner_view`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from berth.container import Services
from tests.bookings_helpers import GUEST, TOUR, reservation, reserve, vacancies
from tests.conftest import ADMIN, KEY_A, KEY_B, auth

CART = "octo/cart"
A_SLOT = "2026-06-03T10:00:00+01:00"  # A reserves here, away from B's slots
FOREIGN_URL = "https://hooks.example/b-only"


@dataclass(frozen=True)
class Owned:
    """What reseller B owns, by kind; `unknown` holds an id of each kind that names nothing."""

    ids: dict[str, str]
    unknown: dict[str, str]


@dataclass(frozen=True)
class Probe:
    """One request of reseller A naming one of B's things (`kind`), through `{id}` in the path,
    in the body or in the query string."""

    method: str
    path: str
    kind: str
    body: Callable[[str], Any] | None = None
    params: Callable[[str], dict[str, str]] | None = None
    # How to compare the two answers; by default the whole body with the id blanked out.
    normalize: Callable[[Any, str], Any] | None = None
    note: str = field(default="")
    capabilities: str = "octo/cart"

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}" + (f" ({self.note})" if self.note else "")


def _blank(body: Any, id_: str) -> Any:
    """The answer with every occurrence of the id replaced, so answers about two different ids
    can be compared whole (an error message must not say more about one than the other)."""
    return orjson.loads(orjson.dumps(body).replace(id_.encode(), b"<id>"))


def _new_booking_shape(body: Any, id_: str) -> Any:
    """A reservation made with B's uuid must be an ordinary new booking of A's, like one made
    with a fresh uuid: compare what does not depend on the generated references."""
    keep = ("status", "productId", "optionId", "availabilityId", "uuid")
    return {k: (body.get(k) if k != "uuid" else body.get(k) == id_) for k in keep}


def _reserve_into(order_id: str) -> dict[str, Any]:
    return reservation(availability_id=A_SLOT, orderId=order_id)


PROBES: tuple[Probe, ...] = (
    # --- bookings (core) ------------------------------------------------------------------
    Probe("GET", "/octo/bookings/{id}", "booking"),
    Probe("PATCH", "/octo/bookings/{id}", "booking", body=lambda _: {"notes": "changed by A"}),
    Probe("POST", "/octo/bookings/{id}/confirm", "booking", body=lambda _: {"contact": GUEST}),
    Probe("POST", "/octo/bookings/{id}/extend", "booking", body=lambda _: {"expirationMinutes": 60}),
    Probe("POST", "/octo/bookings/{id}/cancel", "booking", body=lambda _: {"reason": "A says so"}),
    Probe("DELETE", "/octo/bookings/{id}", "booking"),
    Probe(
        "GET",
        "/octo/bookings",
        "supplier_reference",
        params=lambda ref: {"supplierReference": ref},
        note="by supplierReference",
    ),
    Probe(
        "GET",
        "/octo/bookings",
        "reseller_reference",
        params=lambda ref: {"resellerReference": ref},
        note="by resellerReference",
    ),
    # --- pickups, questions and extras (issue 22), before A reuses B's uuid below: a pickup
    #     set on B's booking, answers given to it and its tickets, extras added to it.
    Probe(
        "PATCH",
        "/octo/bookings/{id}",
        "booking",
        body=lambda _: {"pickupHotel": "The Ritz"},
        capabilities="octo/pickups",
        note="with a pickup",
    ),
    Probe(
        "POST",
        "/octo/bookings/{id}/confirm",
        "booking",
        body=lambda _: {"contact": GUEST, "pickupRequested": True, "pickupHotel": "The Ritz"},
        capabilities="octo/pickups",
        note="with a pickup",
    ),
    Probe(
        "PATCH",
        "/octo/bookings/{id}",
        "booking",
        body=lambda _: {
            "questionAnswers": [{"questionId": "0d0f6f0e-3f6b-4f57-9a43-6b1c0f7f2a22", "value": "x"}],
            "unitItems": [
                {
                    "unitId": "adult",
                    "questionAnswers": [{"questionId": "0d0f6f0e-3f6b-4f57-9a43-6b1c0f7f2a22", "value": "y"}],
                }
            ],
        },
        capabilities="octo/questions",
        note="with answers",
    ),
    Probe(
        "PATCH",
        "/octo/bookings/{id}",
        "booking",
        body=lambda _: {"extraItems": [{"extraId": "lunch"}]},
        capabilities="octo/extras",
        note="with extras",
    ),
    Probe(
        "POST",
        "/octo/bookings",
        "booking",
        body=lambda id_: reservation(availability_id=A_SLOT, uuid=id_),
        normalize=_new_booking_shape,
        note="reusing B's uuid",
    ),
    # --- orders (octo/cart) ---------------------------------------------------------------
    Probe("GET", "/octo/orders/{id}", "order"),
    Probe("PATCH", "/octo/orders/{id}", "order", body=lambda _: {"contact": {"firstName": "Mallory"}}),
    Probe("POST", "/octo/orders/{id}/extend", "order", body=lambda _: {"expirationMinutes": 60}),
    Probe("POST", "/octo/orders/{id}/confirm", "order", body=lambda _: {"contact": GUEST}),
    Probe("POST", "/octo/orders/{id}/cancel", "order", body=lambda _: {"reason": "A says so"}),
    Probe("DELETE", "/octo/orders/{id}", "order"),
    Probe("POST", "/octo/bookings", "order", body=_reserve_into, note="joining B's order"),
    # --- webhooks (octo/webhooks) ---------------------------------------------------------
    Probe("PATCH", "/octo/webhooks/{id}", "webhook", body=lambda _: {"retryOnError": False}),
    Probe("DELETE", "/octo/webhooks/{id}", "webhook"),
    Probe("DELETE", "/octo/webhooks", "webhook_url", params=lambda url: {"url": url}, note="url in query"),
    Probe("DELETE", "/octo/webhooks", "webhook_url", body=lambda url: {"url": url}, note="url in body"),
    # --- gift vouchers (octo/gifts) --------------------------------------------------------
    Probe("GET", "/octo/gifts/{id}", "gift"),
    Probe("PATCH", "/octo/gifts/{id}", "gift", body=lambda _: {"message": "From Mallory"}),
    Probe("POST", "/octo/gifts/{id}/confirm", "gift", body=lambda _: {}),
    Probe("POST", "/octo/gifts/{id}/cancel", "gift", body=lambda _: {"reason": "A says so"}),
    # --- mappings (vendor/mappings, issue 9): GET/PATCH/DELETE /octo/mappings/{id} go here,
    #     with the mapping B owns created in `_owned_by_b` and listed in `_owner_view`.
    # --- resources (octo/resources, issue 5): previews and allocations of B's bookings go
    #     here, as rows of kind "booking".
)


async def _owned_by_b(client: httpx.AsyncClient) -> Owned:
    held = await reserve(client, reservation(resellerReference="B-REF-1", contact=GUEST), key=KEY_B)
    order = await client.post(
        "/octo/orders",
        json={"bookings": [reservation(("adult",), "2026-06-02T14:00:00+01:00")], "contact": GUEST},
        headers=auth(KEY_B, CART),
    )
    assert order.status_code == 200, order.text
    hook = await client.post(
        "/octo/webhooks", json={"event": "booking_update", "url": FOREIGN_URL}, headers=auth(KEY_B)
    )
    assert hook.status_code == 200, hook.text
    for name in ("Reseller A", "Reseller B"):  # both sell gift vouchers: A is refused B's, not all
        sells = await client.put(
            f"/admin/api/connections/{name}/contract",
            json={"products": "ALL", "sellsGifts": True},
            headers=ADMIN,
        )
        assert sells.status_code == 200, sells.text
    gift = await client.post(
        "/octo/gifts",
        json={
            "uuid": str(uuid.uuid4()),
            "amount": 5000,
            "currency": "EUR",
            "emailReceipt": False,
            "contact": GUEST,
        },
        headers=auth(KEY_B),
    )
    assert gift.status_code == 200, gift.text
    return Owned(
        ids={
            "booking": held["uuid"],
            "supplier_reference": held["supplierReference"],
            "reseller_reference": "B-REF-1",
            "order": order.json()["id"],
            "webhook": hook.json()["id"],
            "webhook_url": FOREIGN_URL,
            "gift": gift.json()["uuid"],
        },
        unknown={
            "booking": str(uuid.uuid4()),
            "supplier_reference": "ZZZZZZZZ",
            "reseller_reference": "NO-SUCH-REF",
            "order": str(uuid.uuid4()),
            "webhook": str(uuid.uuid4()),
            "webhook_url": "https://hooks.example/nobody",
            "gift": str(uuid.uuid4()),
        },
    )


async def _owner_view(client: httpx.AsyncClient, owned: Owned) -> dict[str, Any]:
    """Everything B (and the supplier) can see of B's things, including the booking history
    staff see and the places the bookings hold."""
    b = auth(KEY_B, CART)
    booking = (await client.get(f"/octo/bookings/{owned.ids['booking']}", headers=b)).json()
    order = (await client.get(f"/octo/orders/{owned.ids['order']}", headers=b)).json()
    histories = [
        (await client.get(f"/admin/api/bookings/{id_}", headers=ADMIN)).json()["history"]
        for id_ in [booking["id"], *(member["id"] for member in order["bookings"])]
    ]
    return {
        "booking": booking,
        "order": order,
        "webhooks": (await client.get("/octo/webhooks", headers=b)).json(),
        "gift": (await client.get(f"/octo/gifts/{owned.ids['gift']}", headers=b)).json(),
        "histories": histories,
        "vacancies": [await vacancies(client), await vacancies(client, "2026-06-02T14:00:00+01:00")],
    }


async def _send(client: httpx.AsyncClient, probe: Probe, id_: str) -> httpx.Response:
    path = probe.path.replace("{id}", id_)
    kwargs: dict[str, Any] = {"headers": auth(KEY_A, probe.capabilities)}
    if probe.body is not None:
        kwargs["json"] = probe.body(id_)
    if probe.params is not None:
        kwargs["params"] = probe.params(id_)
    return await client.request(probe.method, path, **kwargs)


async def test_another_connections_ids_are_answered_as_unknown(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    owned = await _owned_by_b(client)
    before = await _owner_view(client, owned)
    assert before["booking"]["status"] == "ON_HOLD" and before["order"]["status"] == "ON_HOLD"
    assert len(before["webhooks"]) == 1
    checked = []
    for probe in PROBES:
        foreign_id, unknown_id = owned.ids[probe.kind], owned.unknown[probe.kind]
        foreign = await _send(client, probe, foreign_id)
        unknown = await _send(client, probe, unknown_id)
        normalize = probe.normalize or _blank
        assert foreign.status_code == unknown.status_code, (probe.name, foreign.text, unknown.text)
        assert normalize(foreign.json(), foreign_id) == normalize(unknown.json(), unknown_id), (
            probe.name, foreign.text, unknown.text,
        )  # fmt: skip
        assert await _owner_view(client, owned) == before, probe.name
        answer = foreign.json()
        checked.append(
            (
                probe.name,
                foreign.status_code,
                answer.get("error", "-") if isinstance(answer, dict) else answer,
            )
        )
    # Every row answered as for an unknown id; the reads and changes of ids were refused, the
    # searches came back empty and the reservations became A's own.
    outcomes = {name: (status, error) for name, status, error in checked}
    assert outcomes["GET /octo/bookings/{id}"] == (400, "INVALID_BOOKING_UUID")
    assert outcomes["DELETE /octo/orders/{id}"] == (400, "INVALID_ORDER_ID")
    assert outcomes["POST /octo/bookings (joining B's order)"] == (400, "INVALID_ORDER_ID")
    assert outcomes["DELETE /octo/webhooks/{id}"] == (400, "BAD_REQUEST")
    assert (
        outcomes["GET /octo/gifts/{id}"]
        == outcomes["POST /octo/gifts/{id}/cancel"]
        == (400, "INVALID_GIFT_UUID")
    )
    assert outcomes["POST /octo/bookings (reusing B's uuid)"] == (200, "-")
    assert (
        outcomes["GET /octo/bookings (by supplierReference)"]
        == outcomes["DELETE /octo/webhooks (url in body)"]
        == (200, [])
    )
    assert len({(p.method, p.path) for p in PROBES}) >= 17
    mine = (await client.get(f"/octo/bookings/{owned.ids['booking']}", headers=auth(KEY_A))).json()
    assert mine["uuid"] == owned.ids["booking"] and mine["id"] != before["booking"]["id"]
    assert await vacancies(client, A_SLOT, TOUR) == 20 - 4  # A's two reservations of two adults


def test_the_matrix_covers_every_route_that_takes_an_owned_id(app: Any) -> None:
    """A new OCTO route with an id in its path must get a row in PROBES (or be listed here as
    not owned by a connection)."""
    not_owned = {"/octo/products/{productId}"}
    # The OpenAPI document lists every route (FastAPI's app.routes nests included routers).
    with_ids = {
        path.replace(path[path.index("{") : path.index("}") + 1], "{id}")
        for path in app.openapi()["paths"]
        if path.startswith("/octo/") and "{" in path and path not in not_owned
    }
    assert {"/octo/bookings/{id}", "/octo/webhooks/{id}"} <= with_ids, with_ids
    assert with_ids <= {p.path for p in PROBES}, with_ids - {p.path for p in PROBES}

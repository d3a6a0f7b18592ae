"""One length rule, the same on both databases (issue 39): every text field of every OCTO and
admin API request model has a limit (found by reading the models, so a new field is covered
without a change here), and each is sent at its limit and one past it. At the limit the request
is never refused for its length nor answered 500, and the free text a booking, an order, a
webhook, a mapping row or a staff action keeps is stored whole; one past, it is BAD_REQUEST
(400) naming the field. Run it on PostgreSQL too (BERTH_TEST_POSTGRES_URL): that is where a
column shorter than its field answered 500 (`resellerReference` over 255 characters)."""

from __future__ import annotations

import copy
import types
import typing
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel

from berth.container import Services
from berth.http.octo.mappings import MappingRowBody
from tests.bookings_helpers import GUEST, SLOT, confirm, reservation, reserve
from tests.conftest import ADMIN, auth
from tests.routes import routes_at

Segment = str | int  # a field's name, 0 for a list's first item, "{key}"/"{value}" of a dict
# One character that takes three bytes in UTF-8: a limit is of characters, and the columns and
# their indexes must hold that many of any script.
WIDE = "字"


@dataclass(frozen=True)
class TextField:
    path: tuple[Segment, ...]
    limit: int | None

    @property
    def named(self) -> str:
        """What an error message names the field by (a dict's entry by the dict's name)."""
        return [s for s in self.path if isinstance(s, str) and s not in ("{key}", "{value}")][-1]

    @property
    def name(self) -> str:
        out = ""
        for segment in self.path:
            out += f"[{segment}]" if isinstance(segment, int) else ("." if out else "") + segment
        return out


def _options(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _limit(metadata: list[Any]) -> int | None:
    found = []
    for item in metadata:
        for constraint in getattr(item, "metadata", None) or [item]:
            if getattr(constraint, "max_length", None) is not None:
                found.append(constraint.max_length)
    return min(found, default=None)


def _unwrap(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation, *more = typing.get_args(annotation)
        metadata = [*more, *metadata]
    return annotation, metadata


def text_fields(model: type[BaseModel], prefix: tuple[Segment, ...] = ()) -> Iterator[TextField]:
    for name, field in model.model_fields.items():
        for option in _options(field.annotation):
            yield from _texts(option, list(field.metadata), (*prefix, name))


def _texts(annotation: Any, metadata: list[Any], path: tuple[Segment, ...]) -> Iterator[TextField]:
    annotation, metadata = _unwrap(annotation, metadata)
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from text_fields(annotation, path)
    elif origin is list:
        (item,) = typing.get_args(annotation)
        yield from _texts(item, [], (*path, 0))
    elif origin is dict:
        key, value = typing.get_args(annotation)
        yield from _texts(key, [], (*path, "{key}"))
        yield from _texts(value, [], (*path, "{value}"))
    elif annotation is str:
        yield TextField(path, _limit(metadata))


def _model_at(model: type[BaseModel], name: str) -> Any:
    (option, *_) = _options(model.model_fields[name].annotation)
    return _unwrap(option, [])[0]


def minimal(model: type[BaseModel]) -> dict[str, Any]:
    """The required fields of `model`, each with a plain value of its type."""
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.is_required():
            kind = _model_at(model, name)
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                value: Any = minimal(kind)
            else:
                value = {bool: False, int: 0}.get(kind, "x")
            # A required list (the tickets an undo names, say) holds one such value.
            out[name] = [value] if typing.get_origin(field.annotation) is list else value
    return out


def place(document: Any, model: Any, path: tuple[Segment, ...], value: str) -> None:
    """Put `value` at `path` in `document`, adding what leads there."""
    head, *rest = path
    if head == "{key}":
        document.clear()
        document[value] = "v"
        return
    if head == "{value}":
        document.clear()
        document["X-Test"] = value
        return
    if isinstance(head, int):
        kind = _unwrap(typing.get_args(model)[0], [])[0]
        if not document:
            document.append(minimal(kind) if isinstance(kind, type) and issubclass(kind, BaseModel) else "")
        if not rest:
            document[0] = value
            return
        place(document[0], kind, tuple(rest), value)
        return
    assert isinstance(head, str)
    if not rest:
        document[head] = value
        return
    kind = _model_at(model, head)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        if not isinstance(document.get(head), dict):
            document[head] = minimal(kind)
        place(document[head], kind, tuple(rest), value)
    else:
        fresh: Any = {} if typing.get_origin(kind) is dict else []
        document[head] = document.get(head) or fresh
        place(document[head], kind, tuple(rest), value)


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    model: type[BaseModel]
    listed: bool = False  # the body is an array of the model (PUT /octo/mappings)


def endpoints(app: FastAPI) -> list[Endpoint]:
    found = []
    for path, route in routes_at(app.routes):
        body = route.body_field if isinstance(route, APIRoute) else None
        if body is None or not path.startswith(("/octo", "/admin/api")):
            continue
        for option in _options(body.field_info.annotation):
            if isinstance(option, type) and issubclass(option, BaseModel):
                for method in getattr(route, "methods", None) or ():
                    found.append(Endpoint(method, path, option))
    # Bodies a route reads itself (an array, which FastAPI's body models do not take).
    found.append(Endpoint("PUT", "/octo/mappings", MappingRowBody, listed=True))
    return found


Prepared = tuple[str, Any, dict[str, str]]  # url, body, headers
Base = Callable[[httpx.AsyncClient], Awaitable[Prepared]]
OCTO = auth(capabilities="octo/cart, octo/pickups, octo/questions, octo/extras, octo/resources")


async def _held(client: httpx.AsyncClient) -> str:
    return str((await reserve(client, reservation(ONE)))["uuid"])


async def _order(client: httpx.AsyncClient) -> str:
    made = await client.post("/octo/orders", json={"bookings": [reservation(ONE)]}, headers=OCTO)
    assert made.status_code == 200, made.text
    return str(made.json()["id"])


async def _booking_id(client: httpx.AsyncClient) -> str:
    held = await reserve(client)
    assert (await confirm(client, held["uuid"])).status_code == 200
    return str(held["id"])


async def _webhook(client: httpx.AsyncClient) -> str:
    made = await client.post("/octo/webhooks", json=WEBHOOK, headers=OCTO)
    return str(made.json()["id"])


ONE = ("adult",)
UNIT_ITEMS = [{"unitId": "adult"}]
WEBHOOK = {"event": "booking_update", "url": f"https://h.example/{uuid.uuid4()}"}
DEPARTURE = f"/admin/api/departures/thames-sightseeing/DEFAULT/{SLOT}"


def _octo(url: str, body: Any) -> Prepared:
    return url, body, OCTO


def _admin(url: str, body: Any) -> Prepared:
    return url, body, ADMIN


# Requests that are right but for the field under test: they reach the write, so a column too
# short for its field answers 500 on PostgreSQL. Every other route gets its model's required
# fields: the limits are checked before anything is looked up.
BASES: dict[tuple[str, str], Base] = {
    ("POST", "/octo/bookings"): lambda c: _ready(_octo("/octo/bookings", reservation(ONE))),
    ("PATCH", "/octo/bookings/{uuid}"): lambda c: _after(
        _held(c), lambda u: _octo(f"/octo/bookings/{u}", {"unitItems": UNIT_ITEMS})
    ),
    ("POST", "/octo/bookings/{uuid}/confirm"): lambda c: _after(
        _held(c), lambda u: _octo(f"/octo/bookings/{u}/confirm", {"contact": GUEST, "unitItems": UNIT_ITEMS})
    ),
    ("POST", "/octo/bookings/{uuid}/cancel"): lambda c: _after(
        _held(c), lambda u: _octo(f"/octo/bookings/{u}/cancel", {})
    ),
    ("DELETE", "/octo/bookings/{uuid}"): lambda c: _after(
        _held(c), lambda u: _octo(f"/octo/bookings/{u}", {})
    ),
    ("POST", "/octo/orders"): lambda c: _ready(_octo("/octo/orders", {"bookings": [reservation(ONE)]})),
    ("PATCH", "/octo/orders/{orderId}"): lambda c: _after(
        _order(c), lambda o: _octo(f"/octo/orders/{o}", {})
    ),
    ("POST", "/octo/orders/{orderId}/confirm"): lambda c: _after(
        _order(c), lambda o: _octo(f"/octo/orders/{o}/confirm", {"contact": GUEST})
    ),
    ("POST", "/octo/orders/{orderId}/cancel"): lambda c: _after(
        _order(c), lambda o: _octo(f"/octo/orders/{o}/cancel", {})
    ),
    ("DELETE", "/octo/orders/{orderId}"): lambda c: _after(
        _order(c), lambda o: _octo(f"/octo/orders/{o}", {})
    ),
    ("POST", "/octo/webhooks"): lambda c: _ready(
        _octo("/octo/webhooks", {**WEBHOOK, "url": f"https://h.example/{uuid.uuid4()}"})
    ),
    ("PATCH", "/octo/webhooks/{webhookId}"): lambda c: _after(
        _webhook(c), lambda w: _octo(f"/octo/webhooks/{w}", {})
    ),
    ("PUT", "/octo/mappings"): lambda c: _ready(_octo("/octo/mappings", [{"resellerReference": "r"}])),
    ("POST", "/admin/api/connections"): lambda c: _ready(_admin("/admin/api/connections", {"name": "n"})),
    ("PATCH", DEPARTURE.replace(SLOT, "{availabilityId}")): lambda c: _ready(_admin(DEPARTURE, {})),
    ("POST", "/admin/api/bookings/{bookingId}/cancel"): lambda c: _after(
        _booking_id(c), lambda b: _admin(f"/admin/api/bookings/{b}/cancel", {})
    ),
}


async def _ready(prepared: Prepared) -> Prepared:
    return prepared


async def _after(made: Awaitable[str], then: Callable[[str], Prepared]) -> Prepared:
    return then(await made)


def _key(endpoint: Endpoint) -> tuple[str, str]:
    path = endpoint.path.replace(
        "{productId}/{optionId}/{availabilityId}", "thames-sightseeing/DEFAULT/{availabilityId}"
    )
    return endpoint.method, path


def _generic(endpoint: Endpoint) -> Base:
    url = endpoint.path.replace("{", "").replace("}", "")  # ids nothing has
    body = [minimal(endpoint.model)] if endpoint.listed else minimal(endpoint.model)
    headers = ADMIN if endpoint.path.startswith("/admin") else OCTO
    return lambda c: _ready((url, body, headers))


# Free text that is kept: at its limit it must be stored (200, and given back whole).
KEPT = {
    "notes",
    "resellerReference",
    "firstName",
    "lastName",
    "fullName",
    "phoneNumber",
    "postalCode",
    "country",
    "reason",
    "name",
}


# PATCH /octo/orders changes the order's own fields: the bookings it carries are not read.
NOT_READ = {("PATCH", "/octo/orders/{orderId}", "bookings")}


def _kept(endpoint: Endpoint, field: TextField) -> bool:
    if (endpoint.method, endpoint.path, field.path[0]) in NOT_READ:
        return False
    return _key(endpoint) in BASES and field.path[-1] in KEPT


def _value(field: TextField, length: int) -> str:
    return (WIDE if field.path[-1] in KEPT else "x") * length


async def test_every_text_field_has_a_limit_that_its_column_holds(
    app: FastAPI, client: httpx.AsyncClient, bookable: Services
) -> None:
    roomy = await client.patch(DEPARTURE, json={"capacity": 100_000}, headers=ADMIN)
    assert roomy.status_code == 200, roomy.text
    unlimited: list[str] = []
    wrong: list[str] = []
    checked = 0
    for endpoint in endpoints(app):
        base = BASES.get(_key(endpoint)) or _generic(endpoint)
        for field in text_fields(endpoint.model):
            if field.limit is None:
                unlimited.append(f"{endpoint.method} {endpoint.path} {field.name}")
                continue
            checked += 1
            path = (0, *field.path) if endpoint.listed else field.path
            name = field.name
            for length in (field.limit, field.limit + 1):
                url, body, headers = await base(client)
                body = copy.deepcopy(body)
                value = _value(field, length)
                model: Any = (
                    types.GenericAlias(list, (endpoint.model,)) if endpoint.listed else endpoint.model
                )
                place(body, model, path, value)
                response = await client.request(endpoint.method, url, json=body, headers=headers)
                said = response.text
                too_long = f"at most {field.limit} character" in said
                where = f"{endpoint.method} {endpoint.path} {name} at {length}: {response.status_code} {said[:200]}"
                if (
                    response.status_code >= 500
                    or (length == field.limit and too_long)
                    or (
                        length > field.limit
                        and not (response.status_code == 400 and too_long and field.named in said)
                    )
                    or (
                        length == field.limit
                        and _kept(endpoint, field)
                        and (response.status_code != 200 or value not in said)
                    )
                ):
                    wrong.append(where)
    assert unlimited == [], "text fields without a limit"
    assert wrong == [], "\n".join(wrong)
    assert checked > 250
    print(f"text fields checked: {checked}")


async def test_an_audit_entry_keeps_a_webhooks_whole_url(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """A redelivery is audited with the webhook's URL as its label: a URL of the longest a
    reseller may give (2,048 characters) was longer than the label's column (300)."""
    url = "https://h.example/" + "a" * 2030
    made = await client.post("/octo/webhooks", json={"event": "booking_update", "url": url}, headers=OCTO)
    assert made.status_code == 200, made.text
    redone = await client.post(
        f"/admin/api/webhooks/{made.json()['id']}/redeliver",
        params={"since": "2026-01-01T00:00:00Z"},
        headers=ADMIN,
    )
    assert redone.status_code == 200, redone.text
    audit = (
        await client.get("/admin/api/audit", params={"action": "webhook.redeliver"}, headers=ADMIN)
    ).json()
    assert [e["target"]["label"] for e in audit["entries"]] == [url]

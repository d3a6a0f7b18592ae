"""How many statements a reservation, a confirmation and an order send: the write path's round
trips (issue 31). The counts are pinned, so a change that adds a round trip to the hot path (or
saves one) is seen; `-s` prints each statement."""

from __future__ import annotations

from berth.capabilities.cart.orders import OrderInput
from berth.container import Services
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ConfirmInput, ReserveInput, UnitItemInput
from tests.conftest import Clock
from tests.statement_counts import Statements, counting
from tests.test_catalog_import import MINIMAL

SLOT = "2026-06-02T10:00:00+01:00"
# Statements, BEGIN and COMMIT included (the answer's reads after the commit too; a
# PostgreSQL read in autocommit sends no BEGIN). Before issue 31: SQLite 11, 5, 12, 21;
# PostgreSQL 13, 6, 13, 24 (counting a BEGIN for each autocommit read, as issue 31's counts
# did: 7, 6, 11, 13). An order's bookings read the webhooks their events go to once per
# transaction, an answer reads its departure's overrides and places held in one statement, and on
# PostgreSQL a reservation's row, first event, outbox rows and its departure's lock, check and
# hold are one statement sent as its own transaction (issue 41: `Database.one_call`), and a
# booking of no order is read and locked in one statement. Each booking whose places move
# records its product and day for the kept answers of every process (issue 41 §2: one INSERT
# availability_changes; within the reservation's one statement on PostgreSQL): SQLite 7 and 13,
# PostgreSQL 12 before. A confirmation reads its connection's contract (issue 48: a paying
# channel's booking is confirmed only for a captured payment of its amount): 9 before.
SQLITE_BOUNDS = {"reserve": 8, "repeated reserve": 5, "confirm": 10, "order of two bookings": 15}
POSTGRES_BOUNDS = {"reserve": 2, "repeated reserve": 5, "confirm": 10, "order of two bookings": 14}


def _request(uuid: str) -> ReserveInput:
    return ReserveInput(
        product_id="walk", option_id="DEFAULT", availability_id=SLOT, unit_items=(UnitItemInput("adult"),),
        uuid=uuid,
    )  # fmt: skip


def _show(what: str, statements: Statements) -> None:
    print(f"\n{what}: {len(statements)} statements")
    for kind in statements.kinds():
        print(f"  {kind}")


async def test_statements_of_a_reservation_a_confirmation_and_an_order(
    services: Services, clock: Clock
) -> None:
    await services.catalog.import_text(MINIMAL, actor=COMMAND_LINE)
    connection = await services.connections.ensure("Counter", "counter-key")
    catalog = (await services.catalog.snapshot()).catalog
    await services.bookings.reserve(catalog, connection.id, _request("warm-up"))
    with counting(services.database) as reserve:
        await services.bookings.reserve(catalog, connection.id, _request("counted"))
    with counting(services.database) as repeat:
        await services.bookings.reserve(catalog, connection.id, _request("counted"))
    with counting(services.database) as confirm:
        await services.bookings.confirm(catalog, connection.id, "counted", ConfirmInput(contact=None))
    order = OrderInput(bookings=(_request("first"), _request("second")))
    with counting(services.database) as order_create:
        await services.orders.create(catalog, connection.id, order)
    counted = {
        "reserve": reserve, "repeated reserve": repeat, "confirm": confirm,
        "order of two bookings": order_create,
    }  # fmt: skip
    for what, statements in counted.items():
        _show(what, statements)
    bounds = SQLITE_BOUNDS if services.database.is_sqlite else POSTGRES_BOUNDS
    assert {what: len(statements) for what, statements in counted.items()} == bounds
    if services.database.is_sqlite:
        # The check-and-hold is the last statement before the COMMIT.
        last = reserve.sent[reserve.kinds().index("COMMIT") - 1]
        assert last.startswith("INSERT INTO slot_holds"), last
    else:
        # The write is one statement, the departure's lock, check and hold last in it; what the
        # request sent is in its parameters, never in its text.
        (write, _answer) = reserve.sent
        assert write.startswith("WITH new_booking AS") and "berth_hold_or_refuse(" in write, write
        assert "counted" not in write and "$1" in write, write
    # A confirmation that keeps its places moves their count last.
    moved = confirm.sent[confirm.kinds().index("COMMIT") - 1]
    assert moved.startswith("INSERT INTO slot_holds"), moved

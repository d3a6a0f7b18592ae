"""The monthly sales report per channel and the payments page's totals and CSV add up to the
ledger, over random ledgers (hypothesis): payments and refunds of three channels in three
currencies, in every status, at times around the month's edges (UTC). Each example writes its
rows in a month of its own, so the examples share one database."""

from __future__ import annotations

import csv
import io
import itertools
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.container import Services
from berth.domain.ledger import ChannelSales
from berth.domain.payments import PaymentStatus, RefundStatus
from berth.domain.statements import Month
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.store import payments_repo
from berth.store.ledger_repo import LedgerFilter
from berth.store.payments_repo import Payment, Refund
from berth.translations import currency_precision
from berth.views.ledger import movements_csv
from tests.bookings_helpers import SLOT
from tests.conftest import KEY_A, KEY_B

CURRENCIES = ("EUR", "USD", "JPY")
MICROSECONDS = 10**6
DAY = 86_400 * MICROSECONDS
# The example's month is this one's successor by three months per example: rows fall up to a
# month on each side of it, never in another example's month.
FIRST = Month(2030, 1)
examples = itertools.count()


@dataclass(frozen=True)
class Drawn:
    channel: int
    currency: str
    amount: int
    status: str
    at: Moment
    refunds: tuple[tuple[int, str, Moment], ...]  # (amount, status, at)


# A time: a microsecond or so from the month's start or end, or anywhere from a month before it
# to a month after it (microseconds from its start).
Moment = tuple[str, int]


def _moment() -> st.SearchStrategy[Moment]:
    edges = st.tuples(st.sampled_from(["start", "end"]), st.integers(-1, 1))
    return st.one_of(edges, st.tuples(st.just("free"), st.integers(-31 * DAY, 62 * DAY)))


def _at(moment: Moment, start: datetime, end: datetime) -> datetime:
    where, microseconds = moment
    return (end if where == "end" else start) + timedelta(microseconds=microseconds)


SUCCEEDED_MOSTLY = st.one_of(st.just("succeeded"), st.sampled_from([s.value for s in PaymentStatus]))


drawn = st.builds(
    Drawn,
    channel=st.integers(0, 2),
    currency=st.sampled_from(CURRENCIES),
    amount=st.integers(1, 10**9),
    status=SUCCEEDED_MOSTLY,
    at=_moment(),
    refunds=st.lists(
        st.tuples(
            st.integers(1, 10**9),
            st.one_of(st.just("succeeded"), st.sampled_from([s.value for s in RefundStatus])),
            _moment(),
        ),
        max_size=3,
    ).map(tuple),
)


# The bookings of each test's database (made by its first example).
made: dict[str, list[tuple[str, str]]] = {}


async def _bookings(services: Services) -> list[tuple[str, str]]:
    """A held booking of each of three channels: (booking id, connection id)."""
    if services.settings.database_url in made:
        return made[services.settings.database_url]
    catalog = (await services.catalog.snapshot()).catalog
    found = made.setdefault(services.settings.database_url, [])
    for name, key in (("Reseller A", KEY_A), ("Reseller B", KEY_B), ("Web shop", "shop-key")):
        connection = await services.connections.ensure(name, key)
        data = ReserveInput(
            product_id="thames-sightseeing", option_id="DEFAULT", availability_id=SLOT,
            unit_items=(UnitItemInput("adult"),), uuid=str(uuid.uuid4()),
        )  # fmt: skip
        details = await services.bookings.reserve(catalog, connection.id, data)
        found.append((details.booking.id, connection.id))
    return found


async def _write(
    services: Services, bookings: list[tuple[str, str]], start: datetime, end: datetime, rows: list[Drawn]
) -> None:
    async with services.database.transaction(write=True) as conn:
        for row in rows:
            booking_id, _ = bookings[row.channel]
            at = _at(row.at, start, end)
            payment = Payment(
                id=str(uuid.uuid4()), booking_id=booking_id,
                attempt=await payments_repo.next_attempt(conn, booking_id), provider="stripe", method="card",
                provider_id=f"pi_{uuid.uuid4().hex}", provider_customer=None, provider_setup=None,
                amount=row.amount, currency=row.currency, status=PaymentStatus(row.status), outcome=None,
                failure_reason=None, reference=None, actor="guest", created_at=at - timedelta(minutes=5),
                updated_at=at, captured_at=at if row.status == "succeeded" else None,
            )  # fmt: skip
            await payments_repo.add_payment(conn, payment)
            for amount, status, moment in row.refunds:
                made = _at(moment, start, end)
                refund_id = str(uuid.uuid4())
                await payments_repo.add_refund(
                    conn,
                    Refund(
                        id=refund_id,
                        payment_id=payment.id,
                        provider_id=f"re_{uuid.uuid4().hex}",
                        idempotency_key=f"berth-refund-{refund_id}",
                        amount=amount,
                        currency=row.currency,
                        status=RefundStatus(status),
                        reason="drawn",
                        actor="staff",
                        failure_reason=None,
                        created_at=made,
                        updated_at=made,
                    ),
                )


def _expected(
    rows: list[Drawn], bookings: list[tuple[str, str]], start: datetime, end: datetime
) -> set[ChannelSales]:
    """The report, summed here from what was drawn."""
    sums: dict[tuple[str, str], Counter[str]] = {}
    for row in rows:
        key = (bookings[row.channel][1], row.currency)
        at = _at(row.at, start, end)
        if row.status == "succeeded" and start <= at < end:
            sums.setdefault(key, Counter()).update(payments=1, gross=row.amount)
        for amount, status, moment in row.refunds:
            if status == "succeeded" and start <= _at(moment, start, end) < end:
                sums.setdefault(key, Counter()).update(refunds=1, refunded=amount)
    return {
        ChannelSales(channel, currency, s["payments"], s["gross"], s["refunds"], s["refunded"])
        for (channel, currency), s in sums.items()
    }


async def _csv_net(services: Services, where: LedgerFilter) -> dict[str, Decimal]:
    chunks = [chunk async for chunk in movements_csv(services.ledger.export(where, batch=7), {})]
    rows = list(csv.DictReader(io.StringIO(b"".join(chunks).decode("utf-8").removeprefix("\ufeff"))))
    net: dict[str, Decimal] = {}
    for row in rows:
        net[row["Currency"]] = net.get(row["Currency"], Decimal(0)) + Decimal(row["Gross"])
    return net


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(drawn, max_size=12))
async def test_the_sales_report_the_page_and_the_csv_add_up_to_the_ledger(
    bookable: Services, rows: list[Drawn]
) -> None:
    services = bookable
    bookings = await _bookings(services)
    month = FIRST
    for _ in range(3 * next(examples)):
        month = month.next
    start, end = month.starts_at(), month.next.starts_at()
    await _write(services, bookings, start, end, rows)

    expected = _expected(rows, bookings, start, end)
    report = await services.ledger.sales(month)
    assert set(report) == expected and len(report) == len(expected)

    where = LedgerFilter(moved_from=start, moved_before=end, status="succeeded")
    page = await services.ledger.page(where, 5, 0)
    assert set(page.sales) == expected
    moved = sum(line.payments + line.refunds for line in expected)
    assert page.total == moved and len(page.movements) == min(5, moved)

    net: dict[str, Decimal] = {}
    for line in expected:
        value = Decimal(line.net).scaleb(-currency_precision(line.currency))
        net[line.currency] = net.get(line.currency, Decimal(0)) + value
    assert await _csv_net(services, where) == {c: v for c, v in net.items()}

"""What the supplier's back office shows that no single service answers: the coming days'
slots with their occupancy and day totals, the manifest of one slot, the actions each booking
status offers, the delivery figures of the webhooks pages (counts per webhook and status, each
delivery's latest attempt, the headers it carries), the latest notification of each
mapping row, and the dashboard charts' figures (bookings per day by reseller, occupancy per
day by product)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from urllib.parse import quote
from zoneinfo import ZoneInfo

from berth.container import Services
from berth.delivery.worker import RESERVED_HEADERS, USER_AGENT
from berth.domain.availability import SlotState
from berth.domain.bookings import Booking, BookingStatus, as_of, people_of
from berth.domain.catalog import Catalog, Option, Product, Resource, ResourceGroup, Seat
from berth.domain.catalog.lookup import find_option, find_product
from berth.domain.errors import InvalidAvailabilityId
from berth.domain.resources import Allocation, layout_of, places_of
from berth.domain.slots import Slot, slot_for_id, slots_between
from berth.domain.times import local_datetime
from berth.read_models.bookings import BookingDetails
from berth.read_models.resources import SlotResources
from berth.services.availability import today_in
from berth.store import bookings_reads, deliveries_repo, mappings_repo
from berth.store.bookings_reads import BookingFilter
from berth.store.deliveries_repo import Delivery, LastAttempt

# Bookings whose guests are expected on the slot (a live hold may still become one).
EXPECTED = (BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED, BookingStatus.ON_HOLD)


def expected(booking: Booking) -> bool:
    """Whether the booking's guests are expected on its slot (test bookings never are)."""
    return booking.status in EXPECTED and not booking.test_mode


def guests(details: BookingDetails) -> int:
    """The people a booking brings (`pax` is the places they take)."""
    return people_of(details.option, [item.unit_id for item in details.booking.unit_items])


def departed(slot: Slot, now: datetime) -> bool:
    """Whether the slot is over for the day's work: a departure once it has started, a day of
    opening hours once it has closed."""
    if not slot.all_day:
        return now >= slot.start
    zone = slot.start.tzinfo
    if not slot.opening_hours or not isinstance(zone, ZoneInfo):
        return now >= slot.end
    return now >= local_datetime(slot.local_date, slot.opening_hours[-1][1], zone)


class Action(StrEnum):
    """What staff can do to a booking (each a form posting to /admin/bookings/{id}/{action})."""

    ACCEPT = "accept"
    REJECT = "reject"
    REDEEM = "redeem"
    CANCEL = "cancel"
    RELEASE = "release"  # a hold: cancel it before it expires, freeing its places


# One set of actions per status (the table and its reasons are in docs/decisions.md). The pages
# show only these, and refuse any other.
ACTIONS: dict[BookingStatus, tuple[Action, ...]] = {
    BookingStatus.ON_HOLD: (Action.RELEASE,),
    BookingStatus.PENDING: (Action.ACCEPT, Action.REJECT),
    BookingStatus.CONFIRMED: (Action.REDEEM, Action.CANCEL),
    BookingStatus.REDEEMED: (),
    BookingStatus.CANCELLED: (),
    BookingStatus.EXPIRED: (),
    BookingStatus.REJECTED: (),
}
_IN_WORDS = {
    (Action.RELEASE,): "release the hold",
    (Action.ACCEPT, Action.REJECT): "accept or reject it",
    (Action.REDEEM, Action.CANCEL): "redeem or cancel it",
}


def what_can_be_done(status: BookingStatus) -> str:
    """`you can accept or reject it`, or `it takes no more actions`."""
    offered = ACTIONS[status]
    return f"you can {_IN_WORDS[offered]}" if offered else "it takes no more actions"


@dataclass(frozen=True)
class SlotOccupancy:
    product: Product
    option: Option
    slot: Slot
    state: SlotState
    held: int  # places taken by live bookings
    departed: bool = False
    bookings: int = 0  # bookings whose guests are expected
    guests: int = 0  # the people they bring


@dataclass(frozen=True)
class Tally:
    """What a set of slots adds up to; `capacity` is None when one of them has no limit (slots
    on a closed date sell nothing and add none)."""

    slots: int
    bookings: int
    guests: int
    places: int
    capacity: int | None


def tally(slots: Sequence[SlotOccupancy]) -> Tally:
    capacities = [item.state.capacity for item in slots if not item.slot.closed]
    return Tally(
        slots=len(slots),
        bookings=sum(item.bookings for item in slots),
        guests=sum(item.guests for item in slots),
        places=sum(item.held for item in slots),
        capacity=None if None in capacities else sum(c for c in capacities if c is not None),
    )


@dataclass(frozen=True)
class DaySlots:
    offset: int  # days after the first (today: each product's own date in its time zone)
    slots: list[SlotOccupancy]

    @property
    def departed(self) -> list[SlotOccupancy]:
        return [item for item in self.slots if item.departed]

    @property
    def coming(self) -> list[SlotOccupancy]:
        return [item for item in self.slots if not item.departed]

    @property
    def totals(self) -> Tally:
        return tally(self.slots)

    @property
    def departed_totals(self) -> Tally:
        return tally(self.departed)

    @property
    def one_zone(self) -> bool:
        """Whether every slot of the day starts at the same offset from UTC, under the same zone
        abbreviation (not so with products in several zones, or on a day the clocks change)."""
        return len({(item.slot.start.utcoffset(), item.slot.start.tzname()) for item in self.slots}) <= 1


@dataclass(frozen=True)
class Manifest:
    occupancy: SlotOccupancy
    expected: list[BookingDetails]
    others: list[BookingDetails]  # cancelled, expired, rejected and test bookings
    resources: SlotResources | None = None  # octo/resources: the slot's groups, resources, seats

    @property
    def guests(self) -> int:
        return sum(guests(details) for details in self.expected)


async def _occupancy(
    services: Services, product: Product, option: Option, first: date, last: date
) -> list[SlotOccupancy]:
    slots = slots_between(product, option, first, last)
    now = services.clock()
    found = await services.availability.occupancy(product, option, slots)
    return [
        SlotOccupancy(product, option, slot, state, taken, departed(slot, now))
        for slot, (taken, state) in zip(slots, found, strict=True)
    ]


async def _expected_per_slot(
    services: Services, catalog: Catalog, first: date, last: date
) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(bookings, guests) expected per (product, option, availability id) from `first` to `last`."""
    now = services.clock()
    async with services.database.transaction(write=False) as conn:
        found, _ = await bookings_reads.find_bookings(conn, BookingFilter(date_from=first, date_to=last))
    counts: dict[tuple[str, str, str], tuple[int, int]] = {}
    for raw in found:
        booking = as_of(raw, now)
        product = catalog.product(booking.product_id)
        option = product.option(booking.option_id) if product is not None else None
        if option is None or booking.availability_id is None or not expected(booking):
            continue
        key = (booking.product_id, booking.option_id, booking.availability_id)
        bookings, people = counts.get(key, (0, 0))
        counts[key] = (bookings + 1, people + people_of(option, [i.unit_id for i in booking.unit_items]))
    return counts


async def coming_days(
    services: Services,
    catalog: Catalog,
    days: int = 2,
    *,
    products: Sequence[Product] | None = None,
    first: date | None = None,
) -> list[DaySlots]:
    """Every product's (or only `products`') and option's slots from today on (each product's
    own today, in its time zone) or from `first`, one entry per day, by start time, each with
    the bookings and guests expected on it."""
    chosen = catalog.products if products is None else products
    by_day: list[list[SlotOccupancy]] = [[] for _ in range(days)]
    if not chosen:
        return [DaySlots(offset, []) for offset in range(days)]
    now = services.clock()
    todays = {product.id: first or today_in(product, now) for product in chosen}
    counts = await _expected_per_slot(
        services, catalog, min(todays.values()), max(todays.values()) + timedelta(days=days - 1)
    )
    for product in chosen:
        today = todays[product.id]
        for option in product.options:
            for item in await _occupancy(services, product, option, today, today + timedelta(days=days - 1)):
                bookings, people = counts.get((product.id, option.id, item.slot.id), (0, 0))
                counted = replace(item, bookings=bookings, guests=people)
                by_day[(item.slot.local_date - today).days].append(counted)
    return [
        DaySlots(offset, sorted(slots, key=lambda s: (s.slot.start, s.product.id, s.option.id)))
        for offset, slots in enumerate(by_day)
    ]


async def confirmations_by_day(
    services: Services, zone: ZoneInfo, days: int
) -> tuple[date, dict[str, list[int]]]:
    """The first of the last `days` days (today last, in `zone`), and each connection's
    bookings confirmed on each of them. Counted per hour in the database: in a zone whose offset
    is not whole hours, an hour's bookings count on the day that hour starts."""
    today = services.clock().astimezone(zone).date()
    first = today - timedelta(days=days - 1)
    since = datetime.combine(first, time(), zone).astimezone(UTC)
    until = datetime.combine(today + timedelta(days=1), time(), zone).astimezone(UTC)
    async with services.database.transaction(write=False) as conn:
        found = await bookings_reads.confirmations_per_hour(conn, since, until)
    counts: dict[str, list[int]] = {}
    for hour, connection_id, count in found:
        index = (hour.astimezone(zone).date() - first).days
        if 0 <= index < days:
            counts.setdefault(connection_id, [0] * days)[index] += count
    return first, counts


async def occupancy_by_day(services: Services, product: Product, days: int) -> list[float | None]:
    """The share of the product's places sold on each of its next `days` days (today first),
    over the departures with a limit; None for a day with none."""
    today = today_in(product, services.clock())
    held = [0] * days
    capacity = [0] * days
    for option in product.options:
        for item in await _occupancy(services, product, option, today, today + timedelta(days=days - 1)):
            if item.slot.closed or item.state.capacity is None:
                continue
            index = (item.slot.local_date - today).days
            held[index] += item.held
            capacity[index] += item.state.capacity
    return [h / c if c else None for h, c in zip(held, capacity, strict=True)]


def _lead_name(details: BookingDetails) -> str:
    return (details.booking.contact.full_name or "").casefold()


async def manifest(
    services: Services, catalog: Catalog, product_id: str, option_id: str, availability_id: str
) -> Manifest:
    """Who is booked on one slot: the guests expected, by lead name, then everyone else."""
    product = find_product(catalog, product_id)
    option = find_option(product, option_id)
    slot = slot_for_id(product, option, availability_id)
    if slot is None:
        raise InvalidAvailabilityId(availability_id)
    occupancy = await _occupancy(services, product, option, slot.local_date, slot.local_date)
    found = await services.staff_bookings.find(
        catalog,
        BookingFilter(
            product_id=product.id, option_id=option.id, date_from=slot.local_date, date_to=slot.local_date
        ),
    )
    on_slot = [d for d in found if d.booking.availability_id == slot.id]
    travelling: list[BookingDetails] = []
    others: list[BookingDetails] = []
    for details in on_slot:
        (travelling if expected(details.booking) else others).append(details)
    slot_occupancy = next(o for o in occupancy if o.slot.id == slot.id)
    return Manifest(
        occupancy=slot_occupancy,
        expected=sorted(travelling, key=_lead_name),
        others=others,
        resources=await services.resources.staff_slot(product, option, slot, slot_occupancy.state),
    )


# --- octo/resources: the seat map of a slot, with who sits where ------------------------------

# Statuses whose bookings keep their places and seats (a hold that ran out reads EXPIRED).
HOLDING_STATUSES = (
    BookingStatus.CONFIRMED,
    BookingStatus.PENDING,
    BookingStatus.REDEEMED,
    BookingStatus.ON_HOLD,
)


@dataclass(frozen=True)
class SeatCell:
    seat: Seat | None  # None: no seat at this row and column (an aisle, a gap)
    state: str  # "free", "taken", "blocked" or "none"
    holder: BookingDetails | None = None


@dataclass(frozen=True)
class Holder:
    details: BookingDetails
    allocation: Allocation


@dataclass(frozen=True)
class ResourceBoard:
    resource: Resource
    places: int
    used: int
    holders: list[Holder]
    columns: tuple[str, ...] = ()
    rows: list[tuple[str, list[SeatCell]]] = field(default_factory=list)


@dataclass(frozen=True)
class GroupBoard:
    group: ResourceGroup
    capacity: int
    used: int
    resources: list[ResourceBoard]


def resource_boards(found: Manifest) -> list[GroupBoard]:
    """Every group of the slot's option, with each resource serving the slot: its guests and,
    for a seated resource, its seat map row by row (who is in each seat)."""
    if found.resources is None:
        return []
    holders: dict[str, list[Holder]] = {}
    for details in found.expected:
        if details.booking.status not in HOLDING_STATUSES:
            continue
        for allocation in details.booking.resource_allocations:
            holders.setdefault(allocation.resource_id, []).append(Holder(details, allocation))
    boards = []
    for group_state in found.resources.groups:
        resources = []
        for state in group_state.resources:
            if not state.serving:
                continue
            resource = state.resource
            on_it = holders.get(resource.id, [])
            columns: tuple[str, ...] = ()
            rows: list[tuple[str, list[SeatCell]]] = []
            if resource.seat_map is not None:
                layout = layout_of(resource.seat_map)
                columns = layout.columns
                blocked = set(resource.seat_map.blocked)
                seated = {seat: h.details for h in on_it for seat in h.allocation.seat_ids}
                for row, seat_ids in layout.rows:
                    by_column = {layout.seats[s].column: layout.seats[s] for s in seat_ids}
                    cells = []
                    for column in columns:
                        seat = by_column.get(column)
                        if seat is None:
                            cells.append(SeatCell(None, "none"))
                        elif seat.id in blocked:
                            cells.append(SeatCell(seat, "blocked"))
                        elif seat.id in seated:
                            cells.append(SeatCell(seat, "taken", seated[seat.id]))
                        else:
                            cells.append(SeatCell(seat, "free"))
                    rows.append((row, cells))
            board = ResourceBoard(
                resource, places_of(resource), places_of(resource) - state.free, on_it, columns, rows
            )
            resources.append(board)
        boards.append(
            GroupBoard(
                group_state.group, group_state.capacity, group_state.capacity - group_state.free, resources
            )
        )
    return boards


# --- webhooks and their deliveries ----------------------------------------------------------


async def delivery_counts(
    services: Services, *, webhook_id: str | None = None, statuses: Sequence[str] | None = None
) -> dict[str, Counter[str]]:
    """Webhook deliveries by webhook and status (`pending`, `sending`, `delivered`, `failed`):
    of one webhook, or of all of them in `statuses` (leaving out the delivered ones, by far the
    most, keeps the count on the status index)."""
    async with services.database.transaction(write=False) as conn:
        return await deliveries_repo.counts_by_webhook(conn, webhook_id=webhook_id, statuses=statuses)


async def last_attempts(services: Services, delivery_ids: list[str]) -> dict[str, LastAttempt]:
    """The latest attempt of each delivery, and how many it had in all."""
    async with services.database.transaction(write=False) as conn:
        return await deliveries_repo.last_attempts(conn, delivery_ids)


@dataclass(frozen=True)
class Notification:
    """A mapping row's newest notification, with its latest attempt (None before the first)."""

    delivery: Delivery
    last: LastAttempt | None


async def latest_notifications(services: Services, row_ids: list[str]) -> dict[str, Notification]:
    """The newest notification of each mapping row that has one (two queries for any number)."""
    async with services.database.transaction(write=False) as conn:
        latest = await mappings_repo.latest_notifications(conn, row_ids)
        attempts = await deliveries_repo.last_attempts(conn, [d.id for d in latest.values()])
    return {row_id: Notification(d, attempts.get(d.id)) for row_id, d in latest.items()}


@dataclass(frozen=True)
class SentHeader:
    name: str
    value: str
    note: str = ""  # how a value that changes from one attempt to the next is made


def headers_sent(delivery: Delivery) -> list[SentHeader]:
    """The headers every attempt of a delivery carries, as the delivery worker sends them: the
    Standard Webhooks ones (the timestamp and signatures are made afresh at each attempt), then
    the webhook's own `headers`."""
    sent = [
        SentHeader("Content-Type", "application/json"),
        SentHeader("User-Agent", USER_AGENT),
        SentHeader("webhook-id", delivery.id, "the same on every attempt and redelivery"),
        SentHeader("webhook-timestamp", "Unix time of the attempt", "set at each attempt"),
        SentHeader(
            "webhook-signature",
            "v1,<HMAC-SHA256 of id.timestamp.body>",
            "one per signing secret of the connection that is live at the attempt",
        ),
    ]
    own = [
        SentHeader(name, value)
        for name, value in sorted(delivery.headers.items(), key=lambda item: item[0].lower())
        if name.lower() not in RESERVED_HEADERS
    ]
    return sent + own


@dataclass(frozen=True)
class Subject:
    """What a delivery is about, as staff know it, and the back office page that shows it."""

    label: str
    path: str | None


def delivery_subject(delivery: Delivery) -> Subject:
    kind, _, rest = delivery.subject_key.partition(":")
    payload = delivery.payload if isinstance(delivery.payload, dict) else {}
    if kind == "booking":
        booking = payload.get("booking")
        reference = booking.get("supplierReference") if isinstance(booking, dict) else None
        return Subject(f"Booking {reference or rest}", f"/admin/bookings/{rest}")
    if kind == "order":
        order = payload.get("order")
        reference = order.get("supplierReference") if isinstance(order, dict) else None
        return Subject(f"Order {reference or rest}", None)
    if kind == "product":
        return Subject(f"Product {rest}", f"/admin/catalog/{quote(rest, safe='')}")
    if kind == "mapping":
        reference = payload.get("resellerReference")
        return Subject(f"Mapping {reference or rest}", f"/admin/mappings/{quote(rest, safe='')}")
    if kind == "availability":
        product_id, _, remainder = rest.partition(":")
        option_id, _, availability_id = remainder.partition(":")
        path = "/".join(quote(part, safe="") for part in (product_id, option_id, availability_id))
        return Subject(f"{product_id} · {availability_id}", f"/admin/slots/{path}")
    return Subject(delivery.subject_key, None)

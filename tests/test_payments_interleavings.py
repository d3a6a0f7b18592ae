"""The payment promise over interleavings (hypothesis), against a real localstripe and a real
database: whatever the card does (succeeds, declined, 3-D Secure passed, failed or never
answered), whichever webhooks arrive (duplicated, in any order, or none), whenever the guest
returns, the sweep runs, the hold runs out or other guests take the places, and wherever a step
of Berth's is abandoned part-way (a crash: `tests/crash_points.py`), then retried:

- each PaymentIntent captured at Stripe ends in exactly one CONFIRMED booking of its amount and
  currency, or in exactly one full refund at Stripe (and in the ledger);
- no booking of the shop is confirmed without a captured payment of its price in the ledger
  (checked before every step, not only at the end);
- nothing is captured twice for a booking, nothing refunded twice, and nothing that was not
  captured is refunded.

Every step of Berth's runs in a fresh Services over the same database (a crashed process's
successor), on the test clock; the example count is the hypothesis profile's
(`tests/hypothesis_profiles.py`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from berth.container import Services, build_services
from berth.domain.bookings import BookingStatus
from berth.domain.catalog import Catalog
from berth.domain.payments import OPEN, Outcome, PaymentStatus, RefundStatus
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from berth.services.availability import AvailabilityQuery
from berth.services.payments import Checkout, SettlementState
from berth.settings import Settings
from berth.store import mail_repo, payments_repo
from tests.bookings_helpers import SLOT, booking_catalog
from tests.builders import confirmed_booking, load
from tests.conftest import KEY_A, START, Clock, settings_for
from tests.crash_points import Ran, run_step
from tests.databases import PostgresDatabase, SqliteTemplate
from tests.hypothesis_profiles import interleavings
from tests.stripe_helpers import (
    DECLINED,
    THREE_D_SECURE,
    TOUR_PRICE,
    VISA,
    Browser,
    hold,
    listed,
    localstripe,
    open_shop,
    paying_settings,
    payment_event,
    signed,
)
from tests.stripe_in_front import StripeInFront, stripe_in_front

__all__ = ["localstripe"]

CARDS = (VISA, VISA, THREE_D_SECURE, THREE_D_SECURE, DECLINED)
EVENTS = (
    "payment_intent.succeeded",
    "payment_intent.payment_failed",
    "payment_intent.requires_action",
    "payment_intent.canceled",
    "charge.refunded",
)
MAX_PARTY = 12  # the tour's most units in one booking
PAID = (BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED)

# Where a step of Berth's dies, if it does: at its k-th crash point ("point", k:
# tests/crash_points.py), or right after Stripe carried out its k-th request, whose answer it
# never gets ("answer", k: tests/stripe_in_front.py). A step with fewer runs to its end.
Crash = tuple[str, int] | None
# A step: (what, where it dies, what else it needs).
Step = tuple[str, Crash, Any]
crashes = st.one_of(
    st.none(),
    st.none(),
    st.tuples(st.just("point"), st.integers(min_value=1, max_value=60)),
    st.tuples(st.just("answer"), st.integers(min_value=1, max_value=5)),
)


@st.composite
def attempt(draw: st.DrawFn) -> list[Step]:
    """One try of the guest's: the payment page, the card, pay, 3-D Secure, back to the shop;
    any of them may not happen (the tab closed)."""
    path: list[Step] = [
        ("checkout", draw(crashes), None),
        ("card", None, draw(st.sampled_from(CARDS))),
        ("pay", draw(crashes), None),
        ("authenticate", None, draw(st.booleans())),
        ("return", draw(crashes), None),
    ]
    return [step for step in path if draw(st.integers(0, 9)) > 0]


def settling(crash: st.SearchStrategy[Crash]) -> st.SearchStrategy[Step]:
    """What reads a payment from Stripe and acts on it: the guest's return, a webhook, the sweep."""
    return st.one_of(
        st.tuples(st.just("return"), crash, st.none()),
        st.tuples(
            st.just("webhook"),
            crash,
            st.tuples(st.sampled_from(EVENTS), st.integers(0, 3), st.integers(0, 1)),
        ),
        st.tuples(st.just("sweep"), crash, st.none()),
    )


world_steps = st.one_of(
    settling(crashes),
    st.tuples(st.just("expire"), crashes, st.integers(min_value=5, max_value=40)),
    st.tuples(st.just("others take the places"), st.none(), st.none()),
    st.tuples(st.just("staff cancel"), crashes, st.none()),
)


@st.composite
def late_attempt(draw: st.DrawFn) -> list[Step]:
    """A try whose 3-D Secure is passed late: the hold runs out meanwhile, others may take the
    places or staff cancel the booking, and the payment is settled (and maybe refunded) by
    whatever reads it first."""
    meanwhile = draw(
        st.lists(
            st.sampled_from([("others take the places", None, None), ("staff cancel", None, None)]),
            max_size=1,
        )
    )
    return [
        ("checkout", None, None),
        ("card", None, THREE_D_SECURE),
        ("pay", None, None),
        ("expire", None, draw(st.integers(min_value=31, max_value=40))),
        *meanwhile,
        ("authenticate", None, True),
        draw(settling(crashes)),
    ]


@st.composite
def interleaving(draw: st.DrawFn) -> list[Step]:
    """One or two tries of the guest's, with the world's steps anywhere between them."""
    tries = draw(st.lists(st.one_of(attempt(), late_attempt()), min_size=1, max_size=2))
    steps = [step for one in tries for step in one]
    for extra in draw(st.lists(world_steps, max_size=6)):
        steps.insert(draw(st.integers(0, len(steps))), extra)
    return steps


@dataclass
class Shop:
    """One example's world: a database, the test clock, the guest's browser and its booking."""

    settings: Settings
    fake: FakeStripe
    front: StripeInFront  # where Berth reaches Stripe
    clock: Clock = field(default_factory=lambda: Clock(START))
    booking_uuid: str = ""
    booking_id: str = ""
    checkout: Checkout | None = None  # the payment page the guest's browser has
    challenge: str | None = None  # a 3-D Secure challenge's client secret it was given
    said: list[str] = field(default_factory=list)  # what happened, for a failure's message

    @asynccontextmanager
    async def services(self) -> AsyncIterator[tuple[Services, Catalog]]:
        """A fresh Services over the database (a new process), closed after the step."""
        services = build_services(self.settings, self.clock)
        try:
            yield services, (await services.catalog.snapshot()).catalog
        finally:
            await services.close()

    async def step(
        self, services: Services, what: str, crash: Crash, coro: Coroutine[Any, Any, Any]
    ) -> Ran[Any]:
        how, at = crash or ("", 0)
        dies = self.front.lose_answer(at if how == "answer" else None)
        ran = await run_step(services.database, coro, at if how == "point" else None, dies)
        self.front.lose_answer(None)
        said = f"died at {how} {at}" if ran.cut else f"error {ran.error!r}" if ran.error else "done"
        self.said.append(f"{what}: {said}")
        name = what.split(",")[0].split(" #")[0]
        event(f"{name} died at its {how}" if ran.cut else f"{name} ran")
        return ran

    async def open(self) -> None:
        async with self.services() as (services, _):
            await load(services, booking_catalog())
            self.booking_uuid = await hold(services, await open_shop(services))
            async with services.database.transaction(write=False) as conn:
                (booking,) = await payments_repo.bookings_by_uuid(conn, self.booking_uuid)
            self.booking_id = booking.id

    async def run(self, step: Step) -> None:
        what, crash, extra = step
        browser = Browser(self.fake)
        if what == "card":
            if self.checkout is not None:
                browser.give_card(self.checkout, extra)
                self.said.append(f"card {extra} given")
            return
        if what == "authenticate":
            if self.challenge is not None:
                browser.three_d_secure(self.challenge, success=extra)
                self.said.append(f"3-D Secure {'passed' if extra else 'failed'}")
            return
        if what == "expire":
            self.clock.advance(minutes=extra)
        async with self.services() as (services, catalog):
            await self.check_confirmations(services)
            payments = services.payments
            if what == "checkout":
                ran = await self.step(services, what, crash, payments.checkout(catalog, self.booking_uuid))
                if ran.result is not None:
                    self.checkout, self.challenge = ran.result, None
            elif what == "pay":
                ran = await self.step(services, what, crash, payments.pay(catalog, self.booking_uuid))
                if ran.result is not None and ran.result.state is SettlementState.ACTION_REQUIRED:
                    self.challenge = ran.result.client_secret
            elif what == "return":
                await self.step(services, what, crash, payments.settle(catalog, self.booking_uuid))
            elif what == "webhook":
                kind, which, copy = extra
                ledger = await payments.payments_for_booking(self.booking_id)
                known = [p.provider_id for p in ledger.payments if p.provider_id is not None]
                if known:
                    payment_id = known[which % len(known)]
                    event = payment_event(f"evt_{payment_id}_{kind}_{copy}", kind, payment_id)
                    await self.step(
                        services, f"webhook {kind} #{copy}", crash, payments.handle_webhook(*signed(event))
                    )
            elif what == "sweep":
                await self.step(services, what, crash, payments.sweep(catalog))
            elif what == "expire":
                await self.step(
                    services, f"expiry, {extra} minutes later", crash, services.expiry.expire_due()
                )
            elif what == "staff cancel":
                cancel = payments.cancel(
                    catalog, self.booking_uuid, refund=None, reason="The boat is broken", actor=COMMAND_LINE,
                    force=True,
                )  # fmt: skip
                await self.step(services, what, crash, cancel)
            else:
                assert what == "others take the places"
                await self.others_take_the_places(services, catalog)

    async def others_take_the_places(self, services: Services, catalog: Catalog) -> None:
        query = AvailabilityQuery("thames-sightseeing", "DEFAULT", availability_ids=(SLOT,))
        (slot,) = await services.availability.check(catalog, query)
        left = slot.state.vacancies or 0
        for party in range(0, left, MAX_PARTY):
            await confirmed_booking(
                services, ("Reseller A", KEY_A), "thames-sightseeing", SLOT,
                ["adult"] * min(MAX_PARTY, left - party), {"firstName": "Other", "lastName": "Guest", "emailAddress": "other@example.com"},
            )  # fmt: skip
        self.said.append(f"others took {left} places")

    async def check_confirmations(self, services: Services) -> None:
        """No booking of the shop's confirmed without a captured payment of its price, claimed
        by it; never two claimed."""
        ledger = await services.payments.payments_for_booking(self.booking_id)
        booking = (
            await services.staff_bookings.get((await services.catalog.snapshot()).catalog, self.booking_id)
        )[0].booking
        claimed = [p for p in ledger.payments if p.outcome is Outcome.CLAIMED]
        assert len(claimed) <= 1, self.said
        if booking.status in PAID:
            (payment,) = claimed
            assert payment.status is PaymentStatus.SUCCEEDED, self.said
            assert (payment.amount, payment.currency) == (TOUR_PRICE, "EUR"), self.said

    async def settle_everything(self) -> None:
        """What follows any run: time passes beyond every hold, and the sweep runs (uncut) until
        there is nothing left to settle."""
        self.clock.advance(hours=3)
        async with self.services() as (services, catalog):
            await services.expiry.expire_due()
            for _ in range(2):
                await self.step(services, "sweep", None, services.payments.sweep(catalog))

    async def check_the_promise(self) -> None:
        async with self.services() as (services, catalog):
            await self.check_confirmations(services)
            ledger = await services.payments.payments_for_booking(self.booking_id)
            booking = (await services.staff_bookings.get(catalog, self.booking_id))[0].booking
            async with services.database.transaction(write=False) as conn:
                letters = [
                    m
                    for m in await mail_repo.messages_of(conn, self.booking_id, None)
                    if m.kind == "refunded"
                ]
        intents = [
            pi
            for pi in listed(self.fake, "payment_intents")
            if pi["metadata"].get("berth_booking") == self.booking_id
        ]
        ids = {pi["id"] for pi in intents}
        refunds = [r for r in listed(self.fake, "refunds") if r.get("payment_intent") in ids]
        said = self.said
        for intent in intents:
            rows = [p for p in ledger.payments if p.provider_id == intent["id"]]
            at_stripe = [r for r in refunds if r["payment_intent"] == intent["id"]]
            if intent["status"] != "succeeded":
                assert at_stripe == [], said
                assert all(p.status is not PaymentStatus.SUCCEEDED and p.outcome is None for p in rows), said
                continue
            (row,) = rows
            assert row.status is PaymentStatus.SUCCEEDED, said
            in_ledger = [r for r in ledger.refunds if r.payment_id == row.id]
            if row.outcome is Outcome.CLAIMED:
                assert (intent["amount"], intent["currency"]) == (TOUR_PRICE, "eur"), said
                if booking.status is BookingStatus.CONFIRMED:
                    assert at_stripe == [] and in_ledger == [], said
                    continue
                assert booking.status is BookingStatus.CANCELLED, said  # by staff, refunded in full
            else:
                assert row.outcome is Outcome.REFUND, said
            (refund,) = at_stripe
            (recorded,) = in_ledger
            assert (refund["amount"], refund["status"]) == (intent["amount"], "succeeded"), said
            assert (recorded.provider_id, recorded.amount) == (refund["id"], intent["amount"]), said
            assert recorded.status is RefundStatus.SUCCEEDED, said
        claimed = [p for p in ledger.payments if p.outcome is Outcome.CLAIMED]
        event(f"booking {booking.status.value}")
        event(f"{len([i for i in intents if i['status'] == 'succeeded'])} captured")
        event(f"{len(refunds)} refunded")
        if booking.status in PAID:
            (payment,) = claimed
            (intent,) = [pi for pi in intents if pi["id"] == payment.provider_id]
            assert (intent["status"], intent["amount"]) == ("succeeded", TOUR_PRICE), said
        assert [p for p in ledger.payments if p.status in OPEN] == [], said
        # The guest's letters of refunds: one for each of staff's, and one for each payment
        # refunded in full at once, but for one paid for a booking another payment paid.
        refunded = [p for p in ledger.payments if p.outcome is Outcome.REFUND]
        by_staff = [r for r in ledger.refunds if any(r.payment_id == p.id for p in claimed)]
        told_why = [m.facts["cause"] for m in letters]
        assert told_why.count("staff") == len(by_staff), said
        assert len(told_why) - len(by_staff) <= len(refunded), said
        if not claimed:
            assert len(told_why) == len(refunded), said


async def _example(url: str, fake: FakeStripe, steps: list[Step]) -> None:
    async with stripe_in_front(fake) as front:
        settings = {**paying_settings(settings_for(url), fake).model_dump(), "stripe_api_base": front.url}
        shop = Shop(Settings.model_validate(settings), fake, front)
        await _run(shop, steps)


async def _run(shop: Shop, steps: list[Step]) -> None:
    await shop.open()
    for step in steps:
        await shop.run(step)
    await shop.settle_everything()
    await shop.check_the_promise()


# Found by this test: a page loaded again after the 3-D Secure passed gave up the captured
# payment and began another, left open forever beside the booking the first one confirmed.
CHECKOUT_AFTER_CAPTURE: list[Step] = [
    ("checkout", None, None), ("card", None, THREE_D_SECURE), ("pay", None, None),
    ("authenticate", None, True), ("checkout", None, None), ("return", None, None),
]  # fmt: skip


# The crashes the promise is most about, always tried: Berth dies right after Stripe charged
# the card (pay's fourth request: the payment read, the card read, attached, then charged) and
# only the sweep is left to settle it; and right after Stripe made the refund of a payment that
# came when the places were gone (the guest's return: the payment read, the refunds looked
# for, the refund made).
DIES_AFTER_THE_CHARGE: list[Step] = [
    ("checkout", None, None),
    ("card", None, VISA),
    ("pay", ("answer", 4), None),
]
LATE_AND_GONE: list[Step] = [
    ("checkout", None, None), ("card", None, THREE_D_SECURE), ("pay", None, None), ("expire", None, 31),
    ("others take the places", None, None), ("authenticate", None, True),
]  # fmt: skip


@given(steps=interleaving())
@example(steps=CHECKOUT_AFTER_CAPTURE)
@example(steps=DIES_AFTER_THE_CHARGE)
@example(steps=[*LATE_AND_GONE, ("return", ("answer", 2), None)])
@example(steps=[*LATE_AND_GONE, ("return", ("answer", 3), None)])
@interleavings
def test_every_capture_ends_in_one_confirmation_or_one_full_refund(
    test_database: SqliteTemplate | PostgresDatabase,
    localstripe: FakeStripe,
    tmp_path_factory: pytest.TempPathFactory,
    steps: list[Step],
) -> None:
    url = test_database.fresh(tmp_path_factory.mktemp("example"))
    try:
        asyncio.run(_example(url, localstripe, steps))
    finally:
        if isinstance(test_database, PostgresDatabase):
            asyncio.run(test_database.empty())

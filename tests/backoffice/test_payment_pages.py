"""The back office's money pages against a real localstripe (issue 48 §3): a booking's payments
and refunds, staff cancelling a paid booking with a full, partial or no refund and a reason, a
refund without cancelling, a refund Stripe refuses shown to staff, and the desk's payments; every
money action in the audit trail."""

from __future__ import annotations

import httpx
import pytest

from berth.domain.audit import AuditFilter
from berth.domain.bookings import BookingStatus
from berth.domain.payments import PaymentStatus, RefundStatus
from berth.domain.staff import Role
from tests.backoffice.helpers import notice_of, text_of
from tests.backoffice.payments_helpers import Office, office_paying
from tests.backoffice.test_staff_pages import member, second_client, signed_in
from tests.bookings_helpers import SLOT
from tests.builders import confirmed_booking
from tests.conftest import KEY_A
from tests.stripe_helpers import TOUR_PRICE, localstripe

__all__ = ["localstripe", "office_paying"]


async def _actions(office: Office, action: str) -> list[dict[str, object]]:
    found, _ = await office.services.audit.search(AuditFilter(action=action), 50, 0)
    return [{"by": e.actor, "target": e.target.label, **e.details} for e in found]


async def _status(office: Office, booking_id: str) -> BookingStatus:
    details, _ = await office.services.staff_bookings.get(
        (await office.services.catalog.snapshot()).catalog, booking_id
    )
    return details.booking.status


async def test_the_booking_page_shows_its_card_payment(office_paying: Office) -> None:
    booking_id = await office_paying.paid()
    ledger = await office_paying.services.payments.payments_for_booking(booking_id)
    [payment] = ledger.payments
    page = text_of((await office_paying.client.get(f"/admin/bookings/{booking_id}")).text)
    assert payment.provider_id is not None and payment.provider_id in page
    assert "Received 50.00 EUR · price 50.00 EUR" in page
    assert "SUCCEEDED paid the booking" in page
    assert "Full refund: 50.00 EUR" in page and "Partial refund of" in page and "No refund" in page
    assert "Refund without cancelling" in page


@pytest.mark.parametrize(
    ("choice", "amount", "refunded", "said"),
    [
        ("full", "", TOUR_PRICE, "Refunded 50.00 EUR (re_"),
        ("partial", "12.50", 1250, "Refunded 12.50 EUR (re_"),
        ("none", "", 0, "No refund: its card payment is kept."),
    ],
)
async def test_staff_cancel_a_paid_booking_with_a_full_partial_or_no_refund(
    office_paying: Office, choice: str, amount: str, refunded: int, said: str
) -> None:
    booking_id = await office_paying.paid()
    answer = await office_paying.post(
        f"/admin/bookings/{booking_id}/cancel", reason="Storm warning", refund=choice, amount=amount
    )
    assert answer.status_code == 303
    page = (await office_paying.client.get(answer.headers["location"])).text
    notice = notice_of(page)
    assert notice is not None and "cancelled: CONFIRMED → CANCELLED" in notice and said in notice, notice
    assert await _status(office_paying, booking_id) is BookingStatus.CANCELLED
    ledger = await office_paying.services.payments.payments_for_booking(booking_id)
    assert [(r.amount, r.status, r.reason, r.actor) for r in ledger.refunds] == (
        [(refunded, RefundStatus.SUCCEEDED, "Storm warning", "BERTH_ADMIN_TOKEN")] if refunded else []
    )
    [cancel] = await _actions(office_paying, "booking.cancel")
    assert cancel["reason"] == "Storm warning" and cancel["refund"] == refunded
    assert len(await _actions(office_paying, "payment.refund")) == (1 if refunded else 0)
    if refunded:
        refund = ledger.refunds[0]
        assert refund.provider_id is not None and refund.provider_id in text_of(page)


async def test_a_paid_booking_is_not_cancelled_without_a_reason_and_a_refund_that_holds(
    office_paying: Office,
) -> None:
    booking_id = await office_paying.paid()
    path = f"/admin/bookings/{booking_id}/cancel"
    cases = {
        "give a reason; it is kept with the cancellation and the refund": {"refund": "full"},
        "choose a full, a partial or no refund of its card payment": {"reason": "Storm"},
        "The refund of 60.00 EUR is more than the 50.00 EUR left to refund": {
            "reason": "Storm", "refund": "partial", "amount": "60",
        },
        "The refund 'abc' is not an amount like 25.00": {"reason": "Storm", "refund": "partial", "amount": "abc"},
        "The refund '12.345' has more decimals than its currency (2 decimals)": {
            "reason": "Storm", "refund": "partial", "amount": "12.345",
        },
        "The refund must be more than 0": {"reason": "Storm", "refund": "partial", "amount": "0"},
    }  # fmt: skip
    for expected, form in cases.items():
        answer = await office_paying.post(path, **form)
        assert answer.status_code == 303
        notice = notice_of((await office_paying.client.get(answer.headers["location"])).text)
        assert notice is not None and notice.startswith("Not cancelled: ") and expected in notice, notice
    assert await _status(office_paying, booking_id) is BookingStatus.CONFIRMED
    assert (await office_paying.services.payments.payments_for_booking(booking_id)).refunds == []
    assert await _actions(office_paying, "booking.cancel") == []


async def test_a_refund_without_cancelling_then_the_rest_on_cancelling(office_paying: Office) -> None:
    booking_id = await office_paying.paid()
    answer = await office_paying.post(
        f"/admin/bookings/{booking_id}/refund", amount="10", reason="Late start"
    )
    notice = notice_of((await office_paying.client.get(answer.headers["location"])).text)
    assert notice is not None and notice.startswith("Booking ") and ": Refunded 10.00 EUR (re_" in notice
    assert await _status(office_paying, booking_id) is BookingStatus.CONFIRMED
    page = text_of((await office_paying.client.get(f"/admin/bookings/{booking_id}")).text)
    assert "refunded 10.00 EUR" in page and "Late start" in page and "Full refund: 40.00 EUR" in page
    await office_paying.post(f"/admin/bookings/{booking_id}/cancel", reason="Ill", refund="full")
    ledger = await office_paying.services.payments.payments_for_booking(booking_id)
    assert sorted(r.amount for r in ledger.refunds) == [1000, TOUR_PRICE - 1000]
    refused = await office_paying.post(f"/admin/bookings/{booking_id}/refund", amount="1", reason="again")
    notice = notice_of((await office_paying.client.get(refused.headers["location"])).text)
    assert notice is not None and "has no card payment left to refund" in notice
    page = text_of((await office_paying.client.get(f"/admin/bookings/{booking_id}")).text)
    assert "Refund without cancelling" not in page
    amounts = [a["amount"] for a in await _actions(office_paying, "payment.refund")]
    assert sorted(int(str(a)) for a in amounts) == [1000, TOUR_PRICE - 1000]


async def test_a_refund_stripe_refuses_is_shown_to_staff(office_paying: Office) -> None:
    """Stripe no longer knows the payment (its data emptied, as an account whose keys were
    swapped would answer): the refund staff ask for is kept as failed with Stripe's reason, and
    the booking's page, the payments page and the dashboard say so."""
    booking_id = await office_paying.paid()
    async with httpx.AsyncClient() as stripe:
        emptied = await stripe.delete(f"{office_paying.fake.url}/_config/data")
    assert emptied.status_code == 200, emptied.text
    answer = await office_paying.post(f"/admin/bookings/{booking_id}/refund", reason="Goodwill")
    notice = notice_of((await office_paying.client.get(answer.headers["location"])).text)
    assert notice is not None and "The refund of 50.00 EUR FAILED: " in notice, notice
    [refund] = (await office_paying.services.payments.payments_for_booking(booking_id)).refunds
    assert refund.status is RefundStatus.FAILED and refund.failure_reason
    page = text_of((await office_paying.client.get(f"/admin/bookings/{booking_id}")).text)
    assert f"FAILED: {refund.failure_reason}" in page
    assert "refund again below" in page and "Full refund: 50.00 EUR" in page  # a failed one gave nothing
    for path in ("/admin", "/admin/payments"):
        listed = await office_paying.client.get(path)
        assert "1 refund failed in the last 30 days" in text_of(listed.text), path
    failed = await office_paying.client.get("/admin/payments?type=refund&status=failed")
    assert refund.failure_reason in text_of(failed.text)


async def test_staff_record_a_payment_taken_at_the_desk(office_paying: Office) -> None:
    services = office_paying.services
    contact = {"firstName": "Grace", "lastName": "Hopper", "emailAddress": "grace@example.com"}
    sold = await confirmed_booking(
        services, ("Reseller A", KEY_A), "thames-sightseeing", SLOT, ["adult"], contact
    )
    booking_id = sold.booking.id
    page = (await office_paying.client.get(f"/admin/bookings/{booking_id}")).text
    assert 'name="amount" inputmode="decimal" maxlength="40" value="25.00"' in page  # the booking's price
    assert "No payment is recorded for this booking. Reseller A takes its guests' money itself" in text_of(
        page
    )
    answer = await office_paying.post(
        f"/admin/bookings/{booking_id}/desk-payment",
        method="card_terminal",
        amount="25.00",
        reference="T-0042",
    )
    notice = notice_of((await office_paying.client.get(answer.headers["location"])).text)
    assert (
        notice
        == f"Booking {sold.booking.supplier_reference}: card terminal payment of 25.00 EUR recorded (ref. T-0042)."
    )
    [payment] = (await services.payments.payments_for_booking(booking_id)).payments
    assert (payment.provider, payment.method, payment.amount, payment.currency, payment.reference) == (
        "desk", "card_terminal", 2500, "EUR", "T-0042",
    )  # fmt: skip
    assert (payment.status, payment.outcome, payment.actor) == (
        PaymentStatus.SUCCEEDED,
        None,
        "BERTH_ADMIN_TOKEN",
    )
    page = text_of((await office_paying.client.get(f"/admin/bookings/{booking_id}")).text)
    assert "Received 25.00 EUR · price 25.00 EUR" in page and "T-0042" in page
    assert "Refund without cancelling" not in page  # the desk's money is given back at the desk
    [audited] = await _actions(office_paying, "payment.desk")
    assert audited["method"] == "card_terminal" and audited["amount"] == 2500
    for form, expected in (
        ({"method": "cheque", "amount": "25"}, "choose cash or card terminal"),
        ({"method": "cash", "amount": "-5"}, "The amount must be more than 0"),
        ({"method": "cash", "amount": "2,5,0.001"}, "has more decimals than its currency"),
    ):
        refused = await office_paying.post(f"/admin/bookings/{booking_id}/desk-payment", **form)
        notice = notice_of((await office_paying.client.get(refused.headers["location"])).text)
        assert notice is not None and notice.startswith("No payment recorded: ") and expected in notice, (
            notice
        )
    await office_paying.post(f"/admin/bookings/{booking_id}/cancel", reason="Changed plans")
    refused = await office_paying.post(
        f"/admin/bookings/{booking_id}/desk-payment", method="cash", amount="5"
    )
    notice = notice_of((await office_paying.client.get(refused.headers["location"])).text)
    assert notice is not None and "is CANCELLED: a payment is recorded on a booking that stands" in notice
    assert len((await services.payments.payments_for_booking(booking_id)).payments) == 1


async def test_a_viewer_reads_the_money_and_is_offered_no_money_action(office_paying: Office) -> None:
    booking_id = await office_paying.paid()
    await member(office_paying.services, "vera@example.com", Role.VIEWER)
    async with second_client(office_paying.app) as viewer:
        csrf = await signed_in(viewer, "vera@example.com")
        page = (await viewer.get(f"/admin/bookings/{booking_id}")).text
        assert "Received 50.00 EUR" in text_of(page)
        for form in ("/cancel", "/refund", "/desk-payment"):
            assert f'action="/admin/bookings/{booking_id}{form}"' not in page
        assert (await viewer.get("/admin/payments")).status_code == 200
        refused = await viewer.post(
            f"/admin/bookings/{booking_id}/refund", data={"csrf_token": csrf, "reason": "mine"}
        )
        assert refused.status_code == 403 and "needs the operator role" in refused.text
    assert (await office_paying.services.payments.payments_for_booking(booking_id)).refunds == []

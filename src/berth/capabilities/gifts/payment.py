"""A booking paid in part or in full with a gift voucher over OCTO: `giftPayment`
(`{giftCode, amount, currency}`) on a booking's confirmation. The voucher pays exactly the
amount asked (all of it, or GIFT_INSUFFICIENT_BALANCE), at most the booking's price, taken in
the confirmation's transaction under the voucher's lock (`GiftService.redeem_in`); a
cancellation gives it back (`reverse_in`). The booking keeps the amount, its currency and the
code's last characters, never the code itself."""

from __future__ import annotations

from typing import Any

from berth.capabilities.ids import GIFTS
from berth.domain.bookings import Booking, BookingStatus
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.services.bookings.extensions import BookingExtension, ExtensionStep, Holding, Stage
from berth.services.bookings.locks import SlotLocks
from berth.services.gifts import GiftService
from berth.store.connection import DbConnection

FIELD = "giftPayment"
SHOWN = 4  # characters of the code a booking keeps, to tell vouchers apart


def _payment(sent: Any) -> tuple[str, int, str]:
    if not isinstance(sent, dict):
        raise BadRequest(f"{FIELD} must be an object with giftCode, amount and currency")
    code, amount, currency = sent.get("giftCode"), sent.get("amount"), sent.get("currency")
    if not isinstance(code, str) or not code.strip():
        raise BadRequest(f"{FIELD}.giftCode must be the voucher's code")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise BadRequest(f"{FIELD}.amount must be a whole number of minor units above 0; {amount!r} given")
    if not isinstance(currency, str) or len(currency) != 3:
        raise BadRequest(f"{FIELD}.currency must be a currency code; {currency!r} given")
    return code.strip(), amount, currency.upper()


def gift_payment(booking: Booking) -> dict[str, Any] | None:
    """The booking's gift payment as OCTO shows it (`GiftPayment`), None without one."""
    kept = booking.extensions.get(GIFTS)
    if not kept:
        return None
    return {"giftCode": kept["giftCode"], "amount": kept["amount"], "currency": kept["currency"]}


class GiftPaymentExtension(BookingExtension):
    key = GIFTS

    def __init__(self, gifts: GiftService) -> None:
        self._gifts = gifts
        # The code sent with a confirmation, from `apply` to `hold` of the same step (the booking
        # is locked between them): the booking keeps only its last characters.
        self._codes: dict[str, str] = {}

    def apply(self, step: ExtensionStep) -> dict[str, Any] | None:
        kept = step.kept(GIFTS)
        sent = step.sent.get(FIELD) if step.sent is not None else None
        if sent is None:
            return dict(kept) if kept else None
        if step.stage is not Stage.CONFIRM:
            raise BadRequest(f"{FIELD} is taken on a booking's confirmation only")
        if kept:
            raise UnprocessableEntity(f"Booking {step.booking.uuid!r} is already paid with a gift voucher")
        code, amount, currency = _payment(sent)
        self._codes[step.booking.id] = code
        return {
            "giftCode": "…" + code.replace("-", "")[-SHOWN:].upper(),
            "amount": amount,
            "currency": currency,
        }

    async def hold(self, conn: DbConnection, locks: SlotLocks, holding: Holding) -> None:
        after, before = holding.after, holding.before
        kept = after.extensions.get(GIFTS)
        code = self._codes.pop(after.id, None)
        if after.status is BookingStatus.CANCELLED and before is not None and before.extensions.get(GIFTS):
            await self._gifts.reverse_in(conn, after.id, holding.now)
            return
        if code is None or not kept:
            return
        price = sum(line.price.retail for line in after.price_lines)
        if kept["amount"] > price:
            raise UnprocessableEntity(
                f"{FIELD}.amount {kept['amount']} is more than the booking's price, {price} {after.currency}"
            )
        await self._gifts.redeem_in(conn, code, kept["currency"], kept["amount"], after.id, holding.now)

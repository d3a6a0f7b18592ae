"""The OCTO errors of gift vouchers (octo/gifts), with Ventrata's names where it has them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from berth.domain.errors import OctoError


class InvalidGiftUuid(OctoError):
    """No gift of this connection has this uuid (another connection's is not named)."""

    code = "INVALID_GIFT_UUID"

    def __init__(self, uuid: Any, message: str | None = None) -> None:
        super().__init__(message or f"The gift {uuid!r} does not exist", uuid=uuid)


class InvalidGiftCode(OctoError):
    """A gift code that pays nothing: mistyped, unknown, not yet issued, cancelled or expired.
    The message says which; `giftCode` echoes what was sent."""

    code = "INVALID_GIFT_CODE"

    def __init__(self, code: Any, why: str) -> None:
        super().__init__(f"The gift code {code!r} cannot be used: {why}", giftCode=code)


class GiftCurrencyMismatch(OctoError):
    code = "GIFT_CURRENCY_MISMATCH"

    def __init__(self, gift_currency: str, asked: str) -> None:
        super().__init__(
            f"The gift voucher is in {gift_currency}; it cannot pay an amount in {asked}",
            currency=asked,
            giftCurrency=gift_currency,
        )


def _money(amount: int, currency: str, precision: int) -> str:
    return f"{currency} {Decimal(amount).scaleb(-precision):.{precision}f}"


class GiftInsufficientBalance(OctoError):
    """`balance` and `amount` (what was asked for) are echoed in minor units."""

    code = "GIFT_INSUFFICIENT_BALANCE"

    def __init__(self, balance: int, wanted: int, currency: str, precision: int) -> None:
        message = (
            "The gift voucher has no balance left"
            if balance == 0
            else f"The gift voucher has {_money(balance, currency, precision)} left, less than the "
            f"{_money(wanted, currency, precision)} asked for"
        )
        super().__init__(message, balance=balance, amount=wanted, currency=currency)


class GiftRefused(OctoError):
    """A change the gift's state does not allow (confirm a cancelled gift, cancel a used one)."""

    code = "UNPROCESSABLE_ENTITY"


class GiftsNotSold(OctoError):
    """The connection's contract does not let it sell gift vouchers (BAD_REQUEST: OCTO answers
    400 for every refusal; FORBIDDEN is the admin API's)."""

    code = "BAD_REQUEST"

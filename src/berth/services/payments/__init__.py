"""Card payments of the web shop, the desk's payments and the payments ledger (docs/payments.md)."""

from berth.services.payments.base import PaymentsOff
from berth.services.payments.checkout import Checkout
from berth.services.payments.claims import PaidConfirmations
from berth.services.payments.desk import BookingPayments
from berth.services.payments.service import Payments
from berth.services.payments.settling import Settlement, SettlementState

__all__ = [
    "BookingPayments",
    "Checkout",
    "PaidConfirmations",
    "Payments",
    "PaymentsOff",
    "Settlement",
    "SettlementState",
]

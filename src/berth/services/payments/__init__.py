"""Card payments of the web shop, the desk's payments and the payments ledger (docs/payments.md)."""

from berth.services.payments.claims import PaidConfirmations
from berth.services.payments.service import (
    BookingPayments,
    Checkout,
    Payments,
    Settlement,
    SettlementState,
)

__all__ = ["BookingPayments", "Checkout", "PaidConfirmations", "Payments", "Settlement", "SettlementState"]

"""The payments service: a guest's card payment of a held booking, from the checkout to the
confirmation it pays for (or its full refund), refunds, the desk's payments and the ledger.
`Payments` is the one entry point the rest of Berth uses; each part is a module of its own:
`checkout`, `paying`, `settling`, `webhooks` (and the sweep), `refunds` (and staff's
cancellation of a paid booking), `desk` (and the ledger's reads), on what `base` shares.

How a card payment goes (docs/payments.md): `checkout` writes a payment in the ledger, then
asks the provider for it (a PaymentIntent for the booking's stored price, keyed by the ledger's
payment) and for the place where the guest's browser gives its card (a SetupIntent); `pay`
charges the payment with that card; `settle`, the provider's webhooks and the `sweep` read the
payment from the provider and act on what it says. A captured payment is claimed by the
booking's confirmation (`claims.PaidConfirmations`, in the confirmation's transaction) or
refunded in full, as `domain.payments.settle_action` decides, whoever gets there first.
"""

from __future__ import annotations

from berth.services.payments.checkout import Checkouts
from berth.services.payments.desk import Desk
from berth.services.payments.paying import Paying
from berth.services.payments.webhooks import Webhooks


class Payments(Checkouts, Paying, Webhooks, Desk):
    """Every use case of payments, on the services of `base.PaymentsBase`."""

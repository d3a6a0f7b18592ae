"""The in-transaction steps of a booking's lifecycle, one module per purpose: preparing
(`preparing`), holding places (`holding`), confirming, changing, cancelling and expiring. Each
runs inside its caller's transaction on a booking the caller locked; the reseller and supplier
use cases, orders and packages compose them.

Every step that can take places locks the slot(s) it touches (through the lock manager) and
re-checks capacity inside the same transaction, so two writers can never both take the last
places. How places are counted, which row is locked and where a booking is placed in its slot
is the option's capacity policy's business (`capacity.Placement`).
"""

from __future__ import annotations

from berth.services.bookings.cancelling import Cancelling
from berth.services.bookings.changing import Changing
from berth.services.bookings.confirming import Confirming
from berth.services.bookings.expiring import Expiring


class BookingSteps(Confirming, Changing, Cancelling, Expiring):
    """Every step of a booking, on the services and extension points of `base.StepsBase`."""

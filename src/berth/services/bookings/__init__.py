"""The booking core (OCTO.md §4.6 to §4.12, §5): one booking's lifecycle, split along its jobs.

- `inputs`: what a reseller asks for (reserve, update, confirm) and the reservation fingerprint.
- `capacity`: how an option's places are counted, locked and allocated, and where a booking is
  placed: a policy per option, the plain slot policy here, others registered by their capability.
- `locks`: the slot lock manager (row locks, or none for the race tests).
- `loader`: bookings with what serializing them needs, loaded in batches.
- `steps`: the in-transaction steps, one module per purpose (`preparing`, `holding`,
  `confirming`, `changing`, `cancelling`, `expiring`, on `base`), that reseller and supplier
  use cases, orders and packages compose.
- `reseller`, `supplier`, `expiry`: the use cases, each one transaction.
"""

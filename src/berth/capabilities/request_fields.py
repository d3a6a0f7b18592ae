"""The request fields a capability reads itself (`services.bookings.inputs.Asked`): the booking
core hands them on under these names, the ones reservations' fingerprints have always given
them."""

RENTAL_DURATION_ID = "rentalDurationId"  # octo/rentals: the duration's id
RESOURCE_IDS = "resourceIds"  # octo/resources: the resources chosen (resourceAllocations[].resourceId)
PACKAGE_BOOKINGS = "packageBookings"  # octo/packages: (includeId, availabilityId) of each include chosen

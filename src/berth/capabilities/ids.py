"""The ids of the capabilities Berth implements, for code that checks whether one is active
without depending on its package."""

CART = "octo/cart"
CONTENT = "octo/content"
MAPPINGS = "vendor/mappings"
MAPPINGS_ALIAS = "octo/mappings"  # the id some resellers send for vendor/mappings
PACKAGES = "octo/packages"
EXTRAS = "octo/extras"
PICKUPS = "octo/pickups"
QUESTIONS = "octo/questions"
PRICING = "octo/pricing"
RENTALS = "octo/rentals"
RESOURCES = "octo/resources"
WEBHOOKS = "octo/webhooks"
OFFERS = "octo/offers"
GIFTS = "octo/gifts"

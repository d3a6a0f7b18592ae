"""octo/offers: promotions and promo codes (docs/offers.md)."""

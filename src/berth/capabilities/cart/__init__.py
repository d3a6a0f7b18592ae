"""octo/cart: everything of this capability lives in this package."""

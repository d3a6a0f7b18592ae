"""octo/rentals: everything of this capability lives in this package."""

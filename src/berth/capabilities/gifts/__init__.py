"""octo/gifts: everything of this capability lives in this package."""

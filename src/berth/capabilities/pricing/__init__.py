"""octo/pricing: everything of this capability lives in this package."""

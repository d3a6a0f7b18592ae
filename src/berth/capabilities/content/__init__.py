"""octo/content: everything of this capability lives in this package."""

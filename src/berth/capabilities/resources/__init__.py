"""octo/resources: everything of this capability lives in this package."""

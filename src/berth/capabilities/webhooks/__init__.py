"""octo/webhooks: everything of this capability lives in this package."""

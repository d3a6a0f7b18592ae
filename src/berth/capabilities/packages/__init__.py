"""octo/packages (OCTO.md §6.4): everything of this capability lives in this package."""

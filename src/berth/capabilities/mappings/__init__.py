"""vendor/mappings (alias octo/mappings): everything of this capability lives in this package."""

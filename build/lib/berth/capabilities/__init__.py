"""One module per OCTO capability: the fields it adds to each object it touches."""

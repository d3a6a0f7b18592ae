"""octo/extras: add-ons per option, priced per piece, with an optional stock per departure."""

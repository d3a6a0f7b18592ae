"""Pure domain code: no I/O, no imports from the rest of the project."""

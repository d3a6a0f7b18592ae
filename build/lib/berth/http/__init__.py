"""HTTP surface: parse, authenticate, call one service, serialize. No SQL, no business rules."""

"""Tickets as documents: what a printed ticket says (`sheet`), its barcodes (`barcodes`), the
PDF (`pdf`), the Apple Wallet pass (`pkpass`), and finding them by token (`documents`)."""

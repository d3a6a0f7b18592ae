"""The longest text a client may send in each kind of field. Each request model declares its
field's limit from here (the OpenAPI document shows it as maxLength; longer is BAD_REQUEST
naming the field), and the column that keeps a field fits its limit on SQLite and PostgreSQL
alike (tests/test_text_limits.py sends every limit, and one more, on both)."""

from __future__ import annotations

TEXT = 1000  # free text: notes, contact details, reseller references, reasons, answers, hotels
IDENTIFIER = 200  # the id of something Berth has (a product, a unit, an order): looked up, not kept
CURRENCY = 3  # ISO 4217
LOCALE = 35  # a BCP 47 language tag
CLIENT_UUID = 36  # a UUID in its text form
UNIT_ITEM_UUID = 64  # a ticket's uuid at the gate (admissions.unit_uuid)
URL = 2048  # a webhook's URL
HEADER_NAME = 100  # a webhook's own header
HEADER_VALUE = 2000

"""Table definitions. Migrations in `migrations/versions` must produce exactly this schema
(a test compares them)."""

# Over 500 lines: the schema is one thing, every table beside the tables its keys point to,
# compared whole with what the migrations build; a reader looks a table up by its name.

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)

from berth.store.types import JSONDocument, UTCDateTime

# Version numbers (catalogue, contracts) are 32-bit integers; a number asked for beyond them (a
# typed URL, a fuzzer) names no version rather than failing to bind.
LAST_VERSION = 2**31 - 1

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# One row (id = 1): the supplier document and the catalogue version. Every catalogue write
# bumps `version`; API processes compare it with their cached copy to know when to reload.
catalog_meta = Table(
    "catalog_meta",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", Integer, nullable=False),
    Column("supplier", JSONDocument, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Products as validated documents (see domain.catalog.Product). A product left out of a
# later import is archived, not deleted: bookings keep pointing at it.
products = Table(
    "products",
    metadata,
    Column("id", String(100), primary_key=True),
    Column("position", Integer, nullable=False),
    Column("archived", Boolean, nullable=False, default=False),
    Column("document", JSONDocument, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

connections = Table(
    "connections",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("key_hint", String(12), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
    # Its contract (domain.contracts; NULL: every product at the catalogue's net) and the
    # number of its last save (0: never saved), read with the connection at every key check.
    Column("contract", JSONDocument, nullable=True),
    Column("contract_version", Integer, nullable=False, server_default=text("0")),
)

# Every contract ever saved, per connection, as the catalogue's versions are kept.
contract_versions = Table(
    "contract_versions",
    metadata,
    Column("connection_id", String(36), ForeignKey("connections.id"), primary_key=True),
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("actor", String(254), nullable=False),
    Column("actor_id", String(36), nullable=True),
    Column("actor_role", String(16), nullable=False),
    Column("summary", String(300), nullable=False),
    Column("document", JSONDocument, nullable=False),
)

# Every offers document ever saved (domain.offers); the current one is the highest version.
offer_versions = Table(
    "offer_versions",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("actor", String(254), nullable=False),
    Column("actor_id", String(36), nullable=True),
    Column("actor_role", String(16), nullable=False),
    Column("summary", String(300), nullable=False),
    Column("document", JSONDocument, nullable=False),
)

# A booking's use of an offer that counts against its limits (while the booking holds places:
# a cancelled or expired one gives it back), with the guest's email (lower case) once known.
offer_uses = Table(
    "offer_uses",
    metadata,
    Column("booking_id", String(36), ForeignKey("bookings.id"), primary_key=True),
    Column("offer_id", String(100), nullable=False),
    Column("email", String(254), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_offer_uses_offer_email", "offer_id", "email"),
)

# Orders (octo/cart) group bookings held, confirmed and cancelled together.
orders = Table(
    "orders",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False, index=True),
    Column("supplier_reference", String(16), nullable=False, unique=True),
    Column("status", String(16), nullable=False),
    Column("test_mode", Boolean, nullable=False),
    Column("currency", String(3), nullable=True),
    Column("contact", JSONDocument, nullable=False),
    Column("email_receipt", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("confirmed_at", UTCDateTime, nullable=True),
    Column("cancellation", JSONDocument, nullable=True),
    Index("ix_orders_status_expires", "status", "expires_at"),
)


def _partial_index(name: str, set_column: str, *columns: str) -> Index:
    """An index of the rows where `set_column` is not NULL."""
    where = text(f"{set_column} IS NOT NULL")
    return Index(name, *columns, sqlite_where=where, postgresql_where=where)


# ix_bookings_connection_date's columns (migration 0034).
CONNECTION_DATE_COLUMNS = (
    "connection_id", "local_date", "product_id", "option_id", "availability_id", "status", "test_mode",
    "expires_at", "slot_start", "pax", "id",
)  # fmt: skip

# Bookings. Availability is derived from these rows: a slot's held places are the sum of
# `pax` over its live bookings (ON_HOLD until `expires_at`, CONFIRMED, PENDING, REDEEMED).
bookings = Table(
    "bookings",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False),
    Column("uuid", String(64), nullable=False),
    Column("test_mode", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("product_id", String(100), nullable=False),
    Column("option_id", String(100), nullable=False),
    Column("availability_id", String(40), nullable=True),
    Column("slot_start", UTCDateTime, nullable=True),
    Column("local_date", String(10), nullable=True),
    Column("pax", Integer, nullable=False),
    # RESELLER_REFERENCE (domain.lengths). SQLite keeps the length it was created with: it
    # enforces none, and changing a declared type there copies the table (migration 0030).
    Column("reseller_reference", String(1000).with_variant(String(255), "sqlite"), nullable=True),
    Column("supplier_reference", String(16), nullable=False, unique=True),
    Column("notes", Text, nullable=True),
    Column("contact", JSONDocument, nullable=False),
    Column("unit_items", JSONDocument, nullable=False),
    Column("currency", String(3), nullable=True),
    Column("freesale", Boolean, nullable=False),
    Column("request_fingerprint", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=True),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("confirmed_at", UTCDateTime, nullable=True),
    Column("redeemed_at", UTCDateTime, nullable=True),
    Column("cancellation", JSONDocument, nullable=True),
    Column("rejection", JSONDocument, nullable=True),
    Column("order_id", String(36), ForeignKey("orders.id"), nullable=True),
    Column("is_primary", Boolean, nullable=False, server_default=false()),
    Column("order_position", Integer, nullable=True),
    # octo/rentals: a rental holds its places over [slot_start, slot_end).
    Column("rental_duration_id", String(100), nullable=True),
    Column("slot_end", UTCDateTime, nullable=True),
    Column("package_booking_id", String(36), ForeignKey("bookings.id"), nullable=True),
    Column("package_include_id", String(100), nullable=True),
    Column("resource_allocations", JSONDocument, nullable=True),  # octo/resources, see below
    # What booking extensions keep of the booking, per capability id (Booking.extensions).
    Column("extensions", JSONDocument, nullable=True),
    # What each part was sold at (domain.price_lines): unit items, the booking, extras' pieces.
    Column("price_lines", JSONDocument, nullable=True),
    UniqueConstraint("connection_id", "uuid", name="uq_bookings_connection_uuid"),
    Index("ix_bookings_slot", "product_id", "option_id", "slot_start"),
    # Only the bookings that have the column set: most have no rental end, order or package, and
    # every insert would otherwise add its NULL to each of these B-trees (docs/decisions.md,
    # "Bookings index only what is looked up").
    _partial_index("ix_bookings_rental_end", "slot_end", "product_id", "option_id", "slot_end"),
    _partial_index("ix_bookings_order_id", "order_id", "order_id"),
    _partial_index("ix_bookings_package_booking_id", "package_booking_id", "package_booking_id"),
    # A connection's bookings by day, with every column the allotment arithmetic reads of them
    # (berth.store.allotments_repo): a block holder's places on a departure are summed from the
    # index alone, however many bookings it has there (docs/decisions.md, "An allotment holder's
    # places are read from the index alone").
    Index("ix_bookings_connection_date", *CONNECTION_DATE_COLUMNS),
    # The reference alone: one index serves a connection's lookup by its reference (OCTO
    # GET /bookings) and the back office's search by any reference across connections, whose
    # OR of reseller reference, supplier reference and uuid is one index lookup per arm. A hash
    # index on PostgreSQL: a B-tree entry holds at most 2,704 bytes, and a reference of 1,000
    # characters may take 4,000.
    Index("ix_bookings_reseller_reference", "reseller_reference", postgresql_using="hash"),
    Index("ix_bookings_uuid", "uuid"),
    Index("ix_bookings_status_expires", "status", "expires_at"),
)

# One row per slot that was ever written to; writers lock it (SELECT … FOR UPDATE on
# PostgreSQL) before re-checking capacity, so two writers to one slot take turns. Rental
# options have one row for the whole option (availability_id "RENTAL"): see bookings service.
slot_locks = Table(
    "slot_locks",
    metadata,
    Column("product_id", String(100), primary_key=True),
    Column("option_id", String(100), primary_key=True),
    Column("availability_id", String(40), primary_key=True),
)

# Staff's changes to one departure (berth.domain.departures): closed, a capacity of its own
# instead of the catalogue's, a note. Written under the slot's lock, read wherever a slot's
# state is worked out; a departure without changes has no row.
departure_overrides = Table(
    "departure_overrides",
    metadata,
    Column("product_id", String(100), primary_key=True),
    Column("option_id", String(100), primary_key=True),
    Column("availability_id", String(40), primary_key=True),
    Column("slot_start", UTCDateTime, nullable=False),
    Column("closed", Boolean, nullable=False),
    Column("capacity", Integer, nullable=True),
    Column("note", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_departure_overrides_start", "product_id", "option_id", "slot_start"),
)

# Allotments (domain.allotments): a block's release on one departure, once. `early`: staff
# released it before its time; else the release sweep recorded that its time came (and told the
# webhooks). Blocks themselves live in the contracts.
allotment_releases = Table(
    "allotment_releases",
    metadata,
    Column("connection_id", String(36), ForeignKey("connections.id"), primary_key=True),
    Column("product_id", String(100), primary_key=True),
    Column("option_id", String(100), primary_key=True),
    Column("availability_id", String(40), primary_key=True),
    Column("slot_start", UTCDateTime, nullable=False),
    Column("released_at", UTCDateTime, nullable=False),
    Column("early", Boolean, nullable=False),
    Column("actor", String(254), nullable=True),
    Index("ix_allotment_releases_slot", "product_id", "option_id", "slot_start"),
)

# octo/extras: the pieces of each extra a booking has on its departure. An extra's stock per
# departure is counted from the rows of the bookings that hold places (joined with `bookings`),
# under the departure's slot lock: a booking that ends releases its extras as it does its places.
booking_extras = Table(
    "booking_extras",
    metadata,
    Column("booking_id", String(36), ForeignKey("bookings.id"), primary_key=True),
    Column("extra_id", String(100), primary_key=True),
    Column("product_id", String(100), nullable=False),
    Column("option_id", String(100), nullable=False),
    Column("availability_id", String(40), nullable=False),
    Column("quantity", Integer, nullable=False),
    Index("ix_booking_extras_slot", "product_id", "option_id", "availability_id", "extra_id"),
)

# Places held per slot, kept in the transaction that writes the bookings (bookings_repo): the
# sum of `pax` of the slot's bookings by the instant their hold ends (`until`, see
# berth.domain.bookings.place_hold). A slot's held places are the sum over its rows with
# `until` after now: a few rows, however many bookings the slot has.
slot_holds = Table(
    "slot_holds",
    metadata,
    Column("product_id", String(100), primary_key=True),
    Column("option_id", String(100), primary_key=True),
    Column("availability_id", String(40), primary_key=True),
    Column("until", UTCDateTime, primary_key=True),
    Column("slot_start", UTCDateTime, nullable=False),
    Column("pax", Integer, nullable=False),
    Index("ix_slot_holds_start", "product_id", "option_id", "slot_start"),
)

# What changed the places of which departures, for the answers each process keeps
# (berth.services.answers): one row per product and local date whose availability changed (NULL:
# every one), written in the transaction that changed them. A process asks for the rows committed
# since it last looked: on SQLite by `id` (AUTOINCREMENT: writers take turns, so ids come in
# commit order and are never reused), on PostgreSQL by the writing transaction's id (`xid`,
# pg_current_xact_id()) against the snapshot it last looked under. Rows older than a few
# minutes are dropped by the expiry sweep (berth.store.availability_changes_repo).
availability_changes = Table(
    "availability_changes",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("product_id", String(100), nullable=True),
    Column("local_date", String(10), nullable=True),
    Column("xid", BigInteger, nullable=True),
    Column("changed_at", UTCDateTime, nullable=False),
    _partial_index("ix_availability_changes_xid", "xid", "xid"),  # only PostgreSQL writes `xid`
    sqlite_autoincrement=True,
)

# The tokens of a booking's ticket documents (PDF_URL, PKPASS_URL): one for its voucher
# (item_key "") and one per unit item (its uuid), written when the booking is issued. A ticket
# URL is answered from one lookup of this primary key.
tickets = Table(
    "tickets",
    metadata,
    Column("token", String(64), primary_key=True),
    Column("booking_id", String(36), ForeignKey("bookings.id"), nullable=False),
    Column("item_key", String(64), nullable=False),
    UniqueConstraint("booking_id", "item_key", name="uq_tickets_booking_item"),
)

# What happened to each booking, in order: the back office shows it as the booking's history.
booking_events = Table(
    "booking_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("booking_id", String(36), ForeignKey("bookings.id"), nullable=False, index=True),
    Column("at", UTCDateTime, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("actor", String(64), nullable=False),
    Column("detail", JSONDocument, nullable=False),
)

# Signing secrets of each connection's webhook deliveries. Rotation adds a new secret and
# gives the old one an `expires_at`: until then deliveries carry both signatures. Stored sealed
# (AES-GCM under BERTH_SECRET_KEY, bound to the connection id: berth.domain.sealing).
signing_secrets = Table(
    "signing_secrets",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False, index=True),
    Column("sealed_secret", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
)

webhooks = Table(
    "webhooks",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False, index=True),
    Column("event", String(32), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("capabilities", JSONDocument, nullable=False),
    Column("use_contact_language", Boolean, nullable=False),
    Column("headers", JSONDocument, nullable=False),
    Column("retry_on_error", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("disabled_at", UTCDateTime, nullable=True),
    Column("disabled_reason", String(200), nullable=True),
)

# Changes whose deliveries go to every connection (availability, products) are written here in
# the transaction that made them; the worker fans them out after commit.
outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event", String(32), nullable=False),
    Column("subject", JSONDocument, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("claimed_until", UTCDateTime, nullable=True),
)

# One row per message to one receiver. `id` is the Standard Webhooks message id (stable across
# retries). `sequence` orders the messages of one subject to one target: writers of a subject
# are serialised (row lock, or the single outbox fan-out), so insert order is commit order.
deliveries = Table(
    "deliveries",
    metadata,
    Column("sequence", Integer, primary_key=True, autoincrement=True),
    Column("id", String(40), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("webhook_id", String(36), ForeignKey("webhooks.id", ondelete="SET NULL"), nullable=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False),
    Column("target_key", String(80), nullable=False),
    Column("subject_key", String(200), nullable=False),
    Column("event", String(32), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("headers", JSONDocument, nullable=False),
    Column("payload", JSONDocument, nullable=False),
    Column("status", String(16), nullable=False),
    Column("retry_on_error", Boolean, nullable=False),
    Column("retry_forever", Boolean, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("next_attempt_at", UTCDateTime, nullable=True),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("delivered_at", UTCDateTime, nullable=True),
    Index("ix_deliveries_due", "status", "next_attempt_at"),
    Index("ix_deliveries_order", "target_key", "subject_key", "sequence"),
    Index("ix_deliveries_webhook", "webhook_id", "created_at"),
)

delivery_attempts = Table(
    "delivery_attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("delivery_id", String(40), ForeignKey("deliveries.id"), nullable=False, index=True),
    Column("attempted_at", UTCDateTime, nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("error", String(500), nullable=True),
    Column("latency_ms", Integer, nullable=False),
    Column("response_excerpt", Text, nullable=True),
)

# octo/resources. A booking's allocations are a document on the booking (what it was given);
# these two tables index the allocations of bookings that hold places, so that a slot's use of
# each resource is one aggregate query and no seat of a slot can be given twice. Rows are
# written when a booking takes or changes its allocations and deleted when it stops holding
# places; a hold that expired but was not swept yet keeps its rows until a writer of the slot
# clears them (under the slot lock), and reads leave it out by the booking's status.
booking_resources = Table(
    "booking_resources",
    metadata,
    Column("booking_id", String(36), ForeignKey("bookings.id"), primary_key=True),
    Column("resource_id", String(100), primary_key=True),
    Column("resource_group_id", String(100), nullable=False),
    Column("places", Integer, nullable=False),
)

# One row per seat taken: the primary key is the (slot, seat) uniqueness constraint.
booking_seats = Table(
    "booking_seats",
    metadata,
    Column("product_id", String(100), primary_key=True),
    Column("option_id", String(100), primary_key=True),
    Column("availability_id", String(40), primary_key=True),
    Column("resource_id", String(100), primary_key=True),
    Column("seat_id", String(40), primary_key=True),
    Column("booking_id", String(36), ForeignKey("bookings.id"), nullable=False, index=True),
)

# Self-service mapping rows (vendor/mappings): the reseller's listings, one per
# (connection, reseller_reference). The reseller's uploads write the reseller columns; only
# the supplier writes product_id, option_id and unit_id. `position` keeps the upload's order.
mappings = Table(
    "mappings",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("reseller_reference", String(255), nullable=False),
    Column("reseller_status", String(100), nullable=True),
    Column("reseller_product", String(1000), nullable=True),
    Column("option_required", Boolean, nullable=False),
    Column("unit_required", Boolean, nullable=False),
    Column("validity_days", Integer, nullable=True),
    Column("webhook_url", String(2048), nullable=True),
    Column("product_id", String(100), nullable=True),
    Column("option_id", String(100), nullable=True),
    Column("unit_id", String(100), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("mapped_at", UTCDateTime, nullable=True),
    UniqueConstraint("connection_id", "reseller_reference", name="uq_mappings_connection_reference"),
)

# Rate-limit token buckets, one per connection, shared by every process (services/limits.py):
# `tokens` left at `at` (seconds since the epoch).
rate_buckets = Table(
    "rate_buckets",
    metadata,
    Column("connection_id", String(36), primary_key=True),
    Column("tokens", Float, nullable=False),
    Column("at", Float, nullable=False),
)

# Staff accounts of the back office and the admin API (the bootstrap BERTH_ADMIN_TOKEN has no
# row). The password is an argon2 hash; the API token, like a reseller's key, a SHA-256. A
# session carries its member's `session_generation`: bumping it ends every session at once.
staff = Table(
    "staff",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("email", String(254), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("password_hash", String(200), nullable=False),
    Column("must_change_password", Boolean, nullable=False),
    Column("token_hash", String(64), nullable=True, unique=True),
    Column("token_hint", String(12), nullable=True),
    Column("session_generation", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("disabled_at", UTCDateTime, nullable=True),
)

# What staff did, written in the transaction of the action itself. `actor` is the member's
# email (or `BERTH_ADMIN_TOKEN`, `command line`): kept as it was even if the account goes.
audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("actor", String(254), nullable=False),
    Column("actor_id", String(36), nullable=True),
    Column("actor_role", String(16), nullable=False),
    Column("action", String(64), nullable=False),
    Column("target_kind", String(32), nullable=False),
    Column("target_id", String(300), nullable=False),
    Column(
        "target_label", Text().with_variant(String(300), "sqlite"), nullable=True
    ),  # a webhook's whole URL, for one
    Column("details", JSONDocument, nullable=False),
    Index("ix_audit_log_at", "at"),
    Index("ix_audit_log_actor", "actor", "at"),
    Index("ix_audit_log_target", "target_id", "at"),
)

# Failed sign-ins and wrong admin tokens, per key (`address:IP`, `account:EMAIL`): what throttles
# guessing across processes (berth.domain.guessing). Times are seconds since the epoch.
guessing_failures = Table(
    "guessing_failures",
    metadata,
    Column("key", String(300), primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("last_at", Float, nullable=False),
    Column("blocked_until", Float, nullable=False),
)

# Every catalogue ever saved (issue 30): who saved it (as audit_log names them), through which
# door, a summary of what it changed, and the whole document as the YAML `catalog export` prints.
catalog_versions = Table(
    "catalog_versions",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("actor", String(254), nullable=False),
    Column("actor_id", String(36), nullable=True),
    Column("actor_role", String(16), nullable=False),
    Column("door", String(16), nullable=False),
    Column("summary", String(300), nullable=False),
    Column("document", Text, nullable=False),
)

# Guests' emails (receipts and notices), written in the transaction of the change they tell
# of (what happened: `kind` and `facts`) and written out and sent by the mail worker (the
# language, subject, bodies and recipient are filled in then); without SMTP they stay here as
# the demo's mailbox.
mail_messages = Table(
    "mail_messages",
    metadata,
    Column("sequence", Integer, primary_key=True, autoincrement=True),
    Column("id", String(40), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("booking_id", String(36), nullable=True),
    Column("order_id", String(36), nullable=True),
    Column("gift_id", String(36), nullable=True),  # a gift voucher's email (octo/gifts)
    Column("subject_key", String(60), nullable=False),  # booking:ID, order:ID or gift:ID: sent in order
    Column("recipient", String(320), nullable=True),
    Column("recipient_name", String(200), nullable=True),
    Column("language", String(35), nullable=True),
    Column("subject", Text, nullable=True),
    Column("text_body", Text, nullable=True),
    Column("html_body", Text, nullable=True),
    Column("facts", JSONDocument, nullable=False),
    Column("attachments", JSONDocument, nullable=False),
    Column("requested_by", String(254), nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("error", String(500), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("next_attempt_at", UTCDateTime, nullable=True),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("sent_at", UTCDateTime, nullable=True),
    Index("ix_mail_messages_due", "status", "next_attempt_at"),
    Index("ix_mail_messages_booking_id", "booking_id"),
    Index("ix_mail_messages_order_id", "order_id"),
    Index("ix_mail_messages_gift_id", "gift_id"),
    Index("ix_mail_messages_subject", "subject_key", "sequence"),
)

# Check-in at the gate: one row per ticket (unit item) admitted and not taken back. The primary
# key is what makes two phones scanning one ticket at once admit it once.
admissions = Table(
    "admissions",
    metadata,
    Column("booking_id", String(36), ForeignKey("bookings.id"), primary_key=True),
    Column("unit_uuid", String(64), primary_key=True),
    Column("admitted_at", UTCDateTime, nullable=False),
    Column("admitted_by", String(254), nullable=False),
    Column("device", String(100), nullable=True),
    Column("nonce", String(64), nullable=False),
    Index("ix_admissions_nonce", "nonce"),
)

# Each scan that reached a booking, by the nonce the scanner made for it: the same scan sent
# again (a retry on a bad connection) is answered from here and admits nothing more.
checkin_scans = Table(
    "checkin_scans",
    metadata,
    Column("nonce", String(64), primary_key=True),
    Column("at", UTCDateTime, nullable=False),
    Column("booking_id", String(36), ForeignKey("bookings.id"), nullable=False),
    Column("outcome", JSONDocument, nullable=False),
)

# The payments ledger (docs/payments.md): each payment of a booking, by card through a provider
# (one row per attempt: its PaymentIntent) or taken at the desk, with what became of it.
payments = Table(
    "payments",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("booking_id", String(36), ForeignKey("bookings.id"), nullable=False),
    Column("attempt", Integer, nullable=False),  # the booking's payments in the order they began
    Column("provider", String(16), nullable=False),  # stripe, desk
    Column("method", String(16), nullable=False),  # card, cash, card_terminal
    # The provider's payment (a PaymentIntent id); NULL for the desk's.
    Column("provider_id", String(255), nullable=True, unique=True),
    Column("provider_customer", String(255), nullable=True),
    Column("provider_setup", String(255), nullable=True),  # the SetupIntent the card is given in
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("status", String(16), nullable=False),
    Column("outcome", String(16), nullable=True),  # claimed, refund: what a capture became
    Column("failure_reason", String(500), nullable=True),
    Column("reference", String(200), nullable=True),  # the desk's: a terminal receipt number
    Column("actor", String(254), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("captured_at", UTCDateTime, nullable=True),
    Index("ix_payments_booking_id", "booking_id", "attempt"),
    Index("ix_payments_status", "status", "updated_at"),
    Index("ix_payments_created_at", "created_at"),
)

# Refunds of payments: written before the provider is asked (with the idempotency key that
# asks it), then followed until the provider says succeeded or failed.
payment_refunds = Table(
    "payment_refunds",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("payment_id", String(36), ForeignKey("payments.id"), nullable=False),
    Column("provider_id", String(255), nullable=True, unique=True),
    Column("idempotency_key", String(255), nullable=False, unique=True),
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("status", String(16), nullable=False),
    Column("reason", String(500), nullable=False),
    Column("actor", String(254), nullable=False),
    Column("failure_reason", String(500), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_payment_refunds_payment_id", "payment_id"),
    Index("ix_payment_refunds_status", "status"),
)

# Provider events (webhooks) already processed, by the provider's event id: each once.
payment_events = Table(
    "payment_events",
    metadata,
    Column("provider", String(16), primary_key=True),
    Column("event_id", String(255), primary_key=True),
    Column("type", String(100), nullable=False),
    Column("received_at", UTCDateTime, nullable=False),
)

# The supplier's web shop (issue 48): the connection it sells as (one row, id = 1), made by
# `berth shop open` or the demo. The shop is a sales channel like any reseller's.
shop_channel = Table(
    "shop_channel",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# The shop's bookings: the browser session (the SHA-256 of its cookie's nonce) and client
# address that held each, and its places, for the limits on holds; the salt and SHA-256 of its
# "manage my booking" token (berth.domain.shop_access), never the token itself.
shop_bookings = Table(
    "shop_bookings",
    metadata,
    Column("booking_id", String(36), ForeignKey("bookings.id"), primary_key=True),
    Column("session_hash", String(64), nullable=False),
    Column("address", String(64), nullable=False),
    Column("places", Integer, nullable=False),
    Column("link_salt", String(32), nullable=False),
    Column("link_hash", String(64), nullable=False, unique=True),
    Column("language", String(35), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_shop_bookings_session_hash", "session_hash"),
    Index("ix_shop_bookings_address", "address"),
)

# Gift vouchers (octo/gifts, domain.gifts): sold by a connection like a booking (its uuid an
# idempotency key), their code kept as a digest (what finds it) and sealed (what shows it).
gifts = Table(
    "gifts",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False),
    Column("uuid", String(64), nullable=False),
    Column("status", String(16), nullable=False),
    Column("supplier_reference", String(16), nullable=False, unique=True),
    Column("reseller_reference", String(1000), nullable=True),
    Column("alias", String(1000), nullable=True),
    Column("currency", String(3), nullable=False),
    Column("currency_precision", Integer, nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("net", BigInteger, nullable=False),
    Column("contact", JSONDocument, nullable=False),
    Column("recipient", JSONDocument, nullable=True),
    Column("message", Text, nullable=True),
    Column("notes", Text, nullable=True),
    Column("test_mode", Boolean, nullable=False),
    Column("email_receipt", Boolean, nullable=False),
    Column("settlement_method", String(16), nullable=False),
    Column("request_fingerprint", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("confirmed_at", UTCDateTime, nullable=True),
    Column("cancelled_at", UTCDateTime, nullable=True),
    Column("cancellation_reason", Text, nullable=True),
    Column("code_digest", String(64), nullable=True, unique=True),
    Column("code_sealed", String(200), nullable=True),
    Column("code_hint", String(4), nullable=True),
    UniqueConstraint("connection_id", "uuid", name="uq_gifts_connection_uuid"),
    Index("ix_gifts_status_expires", "status", "expires_at"),
    Index("ix_gifts_connection_created", "connection_id", "created_at"),
)

# A gift's balance, as the ledger of its movements (domain.gifts): appended, never changed.
gift_movements = Table(
    "gift_movements",
    metadata,
    Column("sequence", Integer, primary_key=True, autoincrement=True),
    Column("gift_id", String(36), ForeignKey("gifts.id"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("booking_id", String(36), ForeignKey("bookings.id"), nullable=True),
    Column("at", UTCDateTime, nullable=False),
    Column("actor", String(254), nullable=False),
    Index("ix_gift_movements_gift_id", "gift_id", "sequence"),
    Index("ix_gift_movements_booking_id", "booking_id"),
)

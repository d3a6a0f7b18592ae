"""Settings from `BERTH_*` environment variables."""

from __future__ import annotations

import socket
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from berth.domain.proxies import proxy_networks
from berth.domain.sealing import SecretBox
from berth.domain.shop_access import frame_ancestors
from berth.domain.smtp import parse_smtp_url
from berth.domain.webhooks import parse_schedule

# Used when BERTH_SECRET_KEY is unset, so the embedded demo needs no set-up. Anyone can read it
# here: secrets sealed with it are as good as plain text. `berth serve` warns about it.
DEVELOPMENT_SECRET_KEY = "berth-development-key-not-secret-set-BERTH_SECRET_KEY"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BERTH_", extra="ignore")

    database_url: str = Field(
        default="sqlite:///./berth.db",
        description="The database: a SQLite file (`sqlite:///./berth.db`) or PostgreSQL "
        "(`postgresql://user:password@host:5432/berth`)",
    )
    admin_token: SecretStr | None = Field(
        default=None,
        description="Bearer token of the admin API and the back office's sign-in; unset: both are off",
    )
    public_url: str | None = Field(
        default=None,
        description="Base URL resellers and guests use, e.g. https://octo.example.com (`/octo` is appended "
        "for the OCTO API). Ticket links (in guests' emails, on tickets, in OCTO answers) and webhook "
        "payloads name it. Unset: each answer names the address its request came in on, and ticket links "
        "and webhook payloads the listen URL (`berth serve` warns when BERTH_SMTP_URL is set without it)",
    )
    listen_url: str = Field(
        default="http://127.0.0.1:8000",
        description="Set by `berth serve` for its processes: http://HOST:PORT it listens on. Names Berth "
        "where no request does (webhook payloads) while BERTH_PUBLIC_URL is unset",
    )
    default_expiration_minutes: int = Field(
        default=30, ge=1, description="How long a hold lasts when a reservation names no expirationMinutes"
    )
    max_expiration_minutes: int = Field(
        default=1440, ge=1, description="The longest hold a reseller may ask for (longer asks are capped)"
    )
    max_range_days: int = Field(
        default=366, ge=1, description="The longest date range of an availability or booking-list request"
    )
    contract_announce_days: int = Field(
        default=366,
        ge=1,
        le=3660,
        description="How many days ahead (today included) a contract save announces, by availability_update, "
        "the departures whose availability it changed for a reseller (stop-sells, allotments)",
    )
    expiry_sweep_seconds: float = Field(
        default=5.0,
        gt=0,
        description="How often the worker stores EXPIRED on holds that ran out (reads never count them anyway)",
    )
    debug_disable_slot_lock: bool = Field(
        default=False,
        description="DEBUG ONLY: check capacity outside the slot lock. Exists so a test can show the race it closes.",
    )
    debug_disable_gift_lock: bool = Field(
        default=False,
        description="DEBUG ONLY: redeem gift vouchers without locking them. Exists so a test can show the race "
        "it closes.",
    )
    gift_validity_months: int = Field(
        default=36,
        ge=1,
        le=1200,
        description="How long a gift voucher can be spent: this many months after it is issued (confirmed); "
        "what is left then expires",
    )
    retry_schedule: str = Field(
        default="5,60,300,1800,7200,18000,36000,43200,43200,43200,43200,43200",
        description="Seconds between delivery attempts (about 3.3 days in all by default)",
    )
    webhook_allow_private_targets: bool = Field(
        default=False, description="Allow webhook and mapping URLs on loopback or private networks"
    )
    delivery_concurrency: int = Field(default=64, ge=1, description="Deliveries sent at once per worker")
    delivery_timeout_seconds: float = Field(
        default=10.0, gt=0, description="How long a receiver may take to answer"
    )
    delivery_poll_seconds: float = Field(
        default=1.0, gt=0, description="How often an idle worker looks for work"
    )
    database_ping_idle_seconds: float = Field(
        default=1.0,
        ge=0,
        description="PostgreSQL: check a pooled connection before use when it has been idle this long (0 = always)",
    )
    database_pool_size: int = Field(
        default=16, ge=1, description="PostgreSQL: connections each process keeps open for reuse"
    )
    database_max_overflow: int = Field(
        default=4,
        ge=0,
        description="PostgreSQL: connections a process may open beyond the pool under load (closed when returned)",
    )
    run_worker: bool = Field(default=True, description="Run the background worker inside `berth serve`")
    max_body_bytes: int = Field(default=1024 * 1024, ge=1, description="Largest request body accepted")
    max_list_items: int = Field(
        default=1000,
        ge=1,
        description="Most bookings GET /octo/bookings answers at once (narrow or page past it)",
    )
    max_webhooks_per_connection: int = Field(default=50, ge=1, description="Webhooks one connection may have")
    rate_limit_per_minute: int = Field(
        default=1200,
        ge=0,
        description="Requests per minute per connection, all processes together (0 = no limit)",
    )
    rate_limit_burst: int | None = Field(
        default=None,
        ge=1,
        description="Requests a connection may send at once (default: the per-minute limit)",
    )
    request_timeout_seconds: float = Field(
        default=30.0, ge=0, description="Longest a request may run before it is stopped (0 = no limit)"
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="Encrypts webhook signing secrets at rest; unset: a built-in development key (not for production)",
    )
    secret_key_previous: SecretStr | None = Field(
        default=None, description="Earlier secret keys, comma-separated: they still open what they sealed"
    )
    answer_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        le=60,
        description=(
            "How long an availability answer may be reused while nothing has been committed to the "
            "database (0: never); states that change with the clock alone are at most this late"
        ),
    )
    auth_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        description="How long a process trusts an API key check (revocations elsewhere take this long)",
    )
    log_level: str = Field(
        default="INFO", description="Least severe log level written: DEBUG, INFO, WARNING or ERROR"
    )
    log_format: Literal["json", "console"] = Field(
        default="json",
        description="Logs on stderr: `json` (one object per line, for collectors) or `console` (for people)",
    )
    trusted_proxies: str = Field(
        default="",
        description="Reverse proxies whose X-Forwarded-For names the client, comma-separated addresses "
        "or networks (`127.0.0.1, 10.0.0.0/8`); unset: the connecting address is the client",
    )
    guess_address_limit: int = Field(
        default=10,
        ge=2,
        description="Wrong passwords or admin tokens from one client address that lock it out "
        "(after 3, each waits longer)",
    )
    guess_account_limit: int = Field(
        default=30,
        ge=3,
        description="Wrong passwords for one account, from every address, that lock it out; above "
        "BERTH_GUESS_ADDRESS_LIMIT, so that one address alone never locks an account",
    )
    guess_delay_seconds: float = Field(
        default=1.0, gt=0, description="The first wait after a wrong guess; it doubles with each one"
    )
    guess_lockout_seconds: float = Field(
        default=900.0,
        gt=0,
        description="How long a lockout lasts; failures older than this are forgotten",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: str) -> str:
        proxy_networks(value)
        return value

    @model_validator(mode="after")
    def _account_above_address(self) -> Settings:
        if self.guess_account_limit <= self.guess_address_limit:
            raise ValueError(
                "BERTH_GUESS_ACCOUNT_LIMIT must be above BERTH_GUESS_ADDRESS_LIMIT: else one noisy "
                "address could lock a member of staff out everywhere"
            )
        return self

    smtp_url: SecretStr | None = Field(
        default=None,
        description="Where guests' emails go: `smtp://user:password@host:587` (STARTTLS), "
        "`smtps://user:password@host:465` (implicit TLS) or `smtp://host:25` (a plain relay); "
        "unset: they stay in the database's mailbox, shown in the back office under Outbox. Their ticket "
        "links name BERTH_PUBLIC_URL",
    )
    mail_from: str | None = Field(
        default=None,
        description="The sender of guests' emails (`Name <address>`); unset: the supplier's name and "
        "contact email from the catalogue. Replies go to the supplier's email",
    )
    mail_concurrency: int = Field(
        default=16, ge=1, description="Emails sent at once per worker (and SMTP connections kept open)"
    )
    mail_timeout_seconds: float = Field(
        default=30.0, gt=0, description="How long one email's SMTP conversation may take"
    )
    ticket_paper: Literal["A4", "LETTER"] = Field(
        default="A4", description="Paper size of PDF tickets: `A4` or `LETTER`"
    )
    statement_basis: Literal["travel", "confirmation"] = Field(
        default="travel",
        description="Which month lists a booking on a connection's monthly statement: that of its "
        "travel date (`travel`) or of its confirmation, in UTC (`confirmation`)",
    )
    pkpass_certificate: str | None = Field(
        default=None,
        description="Apple Wallet: path of the pass type certificate (PEM). With the key, team id and "
        "pass type id, products may deliver PKPASS_URL",
    )
    pkpass_key: str | None = Field(
        default=None, description="Apple Wallet: path of the certificate's private key (PEM)"
    )
    pkpass_key_password: SecretStr | None = Field(
        default=None, description="Apple Wallet: the private key's password, if it has one"
    )
    pkpass_wwdr_certificate: str | None = Field(
        default=None,
        description="Apple Wallet: path of Apple's WWDR intermediate certificate (PEM), sent with each "
        "pass's signature (Wallet requires it)",
    )
    pkpass_team_id: str | None = Field(default=None, description="Apple Wallet: the developer team id")
    pkpass_pass_type_id: str | None = Field(
        default=None, description="Apple Wallet: the pass type id, e.g. pass.com.example.tickets"
    )

    shop_origins: str = Field(
        default="",
        description="Origins of the supplier's websites that may embed the web shop (`/shop`) in a frame, as "
        "the widget does (docs/widget.md), space- or comma-separated (`https://www.example.com "
        "https://example.com`): its pages' CSP `frame-ancestors`, and the only pages the widget's frame "
        "talks to; unset: only Berth's own pages may frame it",
    )
    shop_holds_per_session: int = Field(
        default=3,
        ge=1,
        description="Unpaid holds one browser may have in the web shop at once (a guest needs one)",
    )
    shop_holds_per_address: int = Field(
        default=10,
        ge=1,
        description="Unpaid holds one client address may have in the web shop at once (BERTH_TRUSTED_PROXIES "
        "says which address is the client's)",
    )
    shop_places_per_address: int = Field(
        default=30,
        ge=1,
        description="Places one client address may hold unpaid in the web shop at once, all its holds "
        "together: no one browser or address can hold a whole departure",
    )
    shop_few_left: int = Field(
        default=10,
        ge=0,
        description='The web shop says how many places are left ("3 left") on a departure with fewer '
        "than this many (0: never)",
    )
    shop_terms_url: str | None = Field(
        default=None,
        description="The supplier's booking terms, which guests accept in the web shop (a link beside the "
        "box they tick); unset: the products' own booking and cancellation terms alone",
    )

    @field_validator("shop_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        frame_ancestors(value)
        return value

    stripe_secret_key: SecretStr | None = Field(
        default=None,
        description="Card payments of the web shop: Stripe's secret key (`sk_live_...`, or `sk_test_...` "
        "for Stripe's test mode); unset: the shop takes no card payments (`berth serve --demo` starts a "
        "fake Stripe, localstripe, and sets the four BERTH_STRIPE_* settings for it)",
    )
    stripe_publishable_key: str | None = Field(
        default=None, description="Stripe's publishable key (`pk_...`), given to the guest's browser"
    )
    stripe_webhook_secret: SecretStr | None = Field(
        default=None,
        description="The signing secret of Stripe's webhook endpoint `POST /payments/stripe/webhook` "
        "(`whsec_...`); unset: webhooks are refused and payments are followed by the return from the card "
        "step and the payments sweep alone",
    )
    stripe_api_base: str | None = Field(
        default=None,
        description="Another address for Stripe's API, for tests and the demo (a localstripe server, "
        "`http://127.0.0.1:8420`): payments there are in test mode and the browser loads that server's "
        "Stripe.js stand-in",
    )
    stripe_timeout_seconds: float = Field(
        default=20.0,
        gt=0,
        description="How long one call to Stripe may wait for its answer (a call is tried three times in all "
        "before Berth gives up on it)",
    )
    payment_hold_minutes: int = Field(
        default=30,
        ge=1,
        description="While a card payment is in progress the booking's hold lasts at least this long",
    )
    payment_sweep_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often the worker settles payments left half-way (a guest who closed the tab, a "
        "crash) and follows refunds Stripe has not finished",
    )

    @field_validator("retry_schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        parse_schedule(value)
        return value

    @field_validator("smtp_url")
    @classmethod
    def _smtp_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            parse_smtp_url(value.get_secret_value())
        return value

    @field_validator("secret_key")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 32:
            raise ValueError(
                "BERTH_SECRET_KEY must be at least 32 characters (e.g. `openssl rand -base64 32`)"
            )
        return value

    def secret_box(self) -> SecretBox:
        """Seals and opens secrets stored in the database (webhook signing secrets)."""
        key = self.secret_key.get_secret_value() if self.secret_key else DEVELOPMENT_SECRET_KEY
        previous = self.secret_key_previous.get_secret_value().split(",") if self.secret_key_previous else []
        return SecretBox(key, [k.strip() for k in previous if k.strip()])

    @property
    def issues_passes(self) -> bool:
        """Whether Apple Wallet passes can be signed: certificate, key, team and pass type set."""
        return all((self.pkpass_certificate, self.pkpass_key, self.pkpass_team_id, self.pkpass_pass_type_id))

    @property
    def tickets_url(self) -> str:
        """The base URL of ticket documents: BERTH_PUBLIC_URL, else the address `berth serve`
        listens on. Not the address a request came in on: a ticket's URL stays the same."""
        return (self.public_url or self.listen_url).rstrip("/")

    def octo_endpoint(self, arrived_at: str | None = None) -> str:
        """Where resellers reach the OCTO API: BERTH_PUBLIC_URL when set; else the base URL the
        request being answered `arrived_at`, if any; else the address `berth serve` listens on."""
        return (self.public_url or arrived_at or self.listen_url).rstrip("/") + "/octo"


WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})


def listen_url(host: str, port: int) -> str:
    """The URL of `berth serve --host HOST --port PORT`. A wildcard host (every interface) is no
    address to connect to: it is named by this machine's name instead."""
    if host in WILDCARD_HOSTS:
        host = socket.gethostname()
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"

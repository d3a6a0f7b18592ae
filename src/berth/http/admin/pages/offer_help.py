"""The Offers page's help: every key an offer may have, what it does and an example (each
example, put in an offer, is a valid offer: tests/backoffice/test_offer_pages.py reads them all),
and a whole document to start from."""

from __future__ import annotations

from dataclasses import dataclass

from berth.domain.offers import Offer


@dataclass(frozen=True)
class KeyHelp:
    key: str
    says: str  # a key in backticks is written as code
    example: str  # YAML: the key with a value, as it is written in an offer
    also: tuple[str, ...] = ()  # the keys inside it that `says` describes
    required: bool = False


KEYS = (
    KeyHelp(
        "id",
        "The offer's own name: letters, digits and . _ : -, unique in the document. Its uses by "
        "bookings count against it, and its id over OCTO is made from it: keep it when you change "
        "the offer, give a new offer a new one.",
        "id: harbour-ten",
        required=True,
    ),
    KeyHelp(
        "code",
        "What a guest or a reseller types: 3 to 32 capital letters, digits, - and _ (lower case is "
        "read as capitals). Leave it out for an automatic offer, which applies by itself to every "
        "sale it fits (an early-bird price).",
        "code: HARBOUR10",
    ),
    KeyHelp(
        "texts",
        "Its words per language (a language tag such as en-GB): `title` (required), `description` "
        "and `label`, a badge of at most 50 characters (worked out from the discount when empty). "
        "A guest or reseller reads the language they ask for, else the first one given.",
        "texts:\n  en-GB: {title: Harbour 10, description: 10 % off the harbour cruise, label: 10% off}\n"
        "  de-DE: {title: Hafen 10}",
        also=("title", "description", "label"),
        required=True,
    ),
    KeyHelp(
        "discount",
        "What it takes off: `percent` of the price (more than 0, at most 100, two decimals), or "
        "`amounts`, a fixed amount per currency in minor units (500 = 5.00) taken off each unit "
        "(`per: UNIT`, the default) or once off the booking (`per: BOOKING`). Never below 0; "
        "extras are never discounted.",
        "discount: {amounts: {EUR: 500, GBP: 400}, per: BOOKING}",
        also=("percent", "amounts", "per"),
        required=True,
    ),
    KeyHelp(
        "appliesTo",
        "What it applies to: ALL (the default) or a list of products, each with the `options` "
        "and the `units` it covers (left out: all of them).",
        "appliesTo:\n  - {product: harbour-cruise, options: [DEFAULT], units: [adult, child]}",
        also=("product", "options", "units"),
    ),
    KeyHelp(
        "saleFrom",
        "When it can be sold from and until (`saleUntil`): a date and time, UTC unless it has an "
        "offset. Left out: from now on, for ever.",
        "saleFrom: 2026-05-01T00:00:00+01:00\nsaleUntil: 2026-06-30T23:59:59+01:00",
        also=("saleUntil",),
    ),
    KeyHelp(
        "travelFrom",
        "The travel dates it is for, from and until (`travelUntil`), both included: the departure's "
        "local date.",
        "travelFrom: 2026-07-01\ntravelUntil: 2026-09-30",
        also=("travelUntil",),
    ),
    KeyHelp(
        "weekdays",
        "The travel weekdays it is for (MON TUE WED THU FRI SAT SUN). Left out: every day.",
        "weekdays: [SAT, SUN]",
    ),
    KeyHelp(
        "minDaysAhead",
        "Booked at least this many days before the travel date (an early-bird offer).",
        "minDaysAhead: 21",
    ),
    KeyHelp(
        "minUnits",
        "The fewest and the most (`maxUnits`) units it applies to in one booking (a family deal "
        "from 4 people).",
        "minUnits: 4\nmaxUnits: 8",
        also=("maxUnits",),
    ),
    KeyHelp(
        "minTotal",
        "The booking's least total before the discount, per currency, in minor units. A currency "
        "left out has no minimum.",
        "minTotal: {EUR: 10000, GBP: 8500}",
    ),
    KeyHelp(
        "maxUses",
        "How many bookings may use it, in all. A cancelled, rejected or expired booking gives its "
        "use back; the list above shows the live uses.",
        "maxUses: 500",
    ),
    KeyHelp(
        "maxUsesPerEmail",
        "How many bookings of the same guest email may use it.",
        "maxUsesPerEmail: 2",
    ),
    KeyHelp(
        "channels",
        "Who may use it: ALL (the default), or a list of SHOP (the web shop) and connections' ids "
        "(listed below the help).",
        "channels: [SHOP]",
    ),
    KeyHelp(
        "netDiscount",
        "How a reseller's net follows the discount: PRORATED (the default: the net falls in "
        "proportion to the retail, so the commission rate stays), FULL (the net falls by the whole "
        "discount: the supplier gives all of it), SPLIT (by half of it) or NONE (the net stays, "
        "never above the discounted retail).",
        "netDiscount: FULL",
    ),
    KeyHelp(
        "active",
        "false keeps the offer in the document but sells it no more (bookings that used it keep "
        "their price).",
        "active: false",
    ),
)

EXAMPLE = """\
offers:
  - id: early-bird-kayak
    texts:
      en-GB: {title: Early bird, description: 15 % off when you book three weeks ahead}
    discount: {percent: 15}
    appliesTo: [{product: sunset-kayak}]
    travelFrom: 2026-06-01
    travelUntil: 2026-09-30
  - id: harbour-ten
    code: HARBOUR10
    texts:
      en-GB: {title: Harbour 10, label: 10% off}
    discount: {percent: 10}
    appliesTo: [{product: harbour-cruise, units: [adult, child]}]
    maxUses: 500
    maxUsesPerEmail: 2
    channels: [SHOP]
    netDiscount: FULL
"""


def offer_keys() -> list[KeyHelp]:
    """The help of each key an offer has (a key the offer does not know is not offered)."""
    known = {field.alias for field in Offer.model_fields.values()}
    return [k for k in KEYS if k.key in known]

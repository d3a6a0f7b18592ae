"""What the shop tells a guest when something cannot be done, in their language: each rule a
choice breaks (`berth.domain.shop_party`), each refusal of the booking core in a guest's terms
(the core's own messages are written for resellers' developers), the limits on holds."""

from __future__ import annotations

import re
from collections.abc import Callable

from berth.domain.errors import OctoError
from berth.domain.shop_access import Refusal
from berth.domain.shop_party import Problem, Rule
from berth.translations import N_, Words

RULES = {
    Rule.NO_GUESTS: N_("Choose how many guests are coming."),
    Rule.TOO_FEW: N_("Book at least {count} guests."),
    Rule.TOO_MANY: N_("Book at most {count} guests at once."),
    Rule.UNIT_TOO_FEW: N_("{unit}: book at least {count}, or none."),
    Rule.UNIT_TOO_MANY: N_("{unit}: book at most {count}."),
    Rule.UNACCOMPANIED: N_("{unit} must come with {others}."),
    Rule.EXTRA_TOO_FEW: N_("{extra}: choose at least {count}."),
    Rule.EXTRA_TOO_MANY: N_("{extra}: choose at most {count}."),
    Rule.PICKUP_REQUIRED: N_("Choose where we pick you up."),
    Rule.PICKUP_UNKNOWN: N_("Choose one of the pickup points listed."),
    Rule.ANSWER_REQUIRED: N_("Please answer this question."),
    Rule.ANSWER_NOT_AN_OPTION: N_("Choose one of the answers listed."),
    Rule.ANSWER_TOO_LONG: N_("Please answer in at most {most} characters."),
    Rule.ANSWER_WRONG_FORMAT: N_("This answer is not in the form asked for."),
    Rule.CONTACT_MISSING: N_("Please fill this in."),
    Rule.CONTACT_TOO_LONG: N_("Please use at most {most} characters."),
    Rule.EMAIL_INVALID: N_("This is not an email address we can send your tickets to."),
    Rule.TERMS: N_("Please accept the booking terms to go on."),
    Rule.INCLUDE_REQUIRED: N_("{include}: choose a time."),
    Rule.INCLUDE_NOT_FOR_PARTY: N_("{include} cannot be booked for {unit}."),
    Rule.GROUP_TOO_MANY: N_("{group}: choose at most {count}."),
}

REFUSALS = {
    Refusal.SESSION: N_(
        "You already have bookings waiting for payment in this browser. Pay for one, or give it up, "
        "before you start another."
    ),
    Refusal.ADDRESS: N_(
        "Too many bookings are waiting for payment from your network just now. Please finish one, or try "
        "again in half an hour."
    ),
    Refusal.PLACES: N_(
        "Too many places are held unpaid from your network just now. Please book fewer places, or try "
        "again in half an hour."
    ),
}

# What the booking core may refuse when the places are held, by OCTO error code.
PLACES_GONE = N_("Sorry, those places have just been taken. Please choose another time or fewer guests.")
DEPARTURE_GONE = N_("Sorry, this time can no longer be booked. Please choose another.")
EXTRA_GONE = N_("Sorry, an extra you chose has just sold out for this time. Please choose again.")
NOT_ON_SALE = N_("Sorry, this is no longer on sale.")
NO_ROOM_THERE = N_(
    "Sorry, there is no room for your party where you chose. Choose another, or let us choose for you."
)
NOT_HELD = N_("Sorry, these places could not be held as chosen. Please check your choices and try again.")
# What the booking core may refuse of a package's include (octo/packages), which it names.
INCLUDE_SOLD_OUT = N_("Sorry, {include} has just sold out at the time you chose. Please choose another time.")
INCLUDE_GONE = N_("Sorry, {include} can no longer be booked at the time you chose. Please choose another.")
INCLUDE_NOT_HELD = N_("Sorry, {include} could not be booked with your choices. Please choose again.")
# The core's messages name the include a refusal is about (`capabilities/packages/service.py`).
INCLUDE_NAMED = re.compile(r"packageBookings include '([^']+)'")


def problem_text(words: Words, problem: Problem, name: Callable[[str], str]) -> str:
    """The rule broken, in words; `name` gives a unit's, an extra's or a question's title by id."""
    values: dict[str, object] = dict(problem.values)
    for key in ("unit", "extra", "question", "include", "group"):
        if key in values:
            values[key] = name(str(values[key]))
    if "others" in values:
        values["others"] = words(" or ").join(name(other) for other in str(values["others"]).split(","))
    return words(RULES[problem.rule], **values)


def refused_text(words: Words, error: OctoError, name: Callable[[str], str] | None = None) -> str:
    """Why the booking core would not hold the guest's choice, in a guest's terms; `name` gives
    the title of a package's include by id, for a refusal of one of them."""
    named = INCLUDE_NAMED.match(error.message)
    if named is not None and name is not None:
        include = name(named.group(1))
        if error.code == "INVALID_AVAILABILITY_ID":
            return words(INCLUDE_GONE, include=include)
        if "sold out" in error.message or "free places" in error.message:
            return words(INCLUDE_SOLD_OUT, include=include)
        return words(INCLUDE_NOT_HELD, include=include)
    if error.code == "INVALID_AVAILABILITY_ID":
        return words(DEPARTURE_GONE)
    if error.code in ("INVALID_PRODUCT_ID", "INVALID_OPTION_ID"):
        return words(NOT_ON_SALE)
    if "extraId" in error.extra:
        return words(EXTRA_GONE)
    if "resourceId" in error.extra or "free places" in error.message:
        return words(NO_ROOM_THERE)
    if error.code == "UNPROCESSABLE_ENTITY" and "sold out" in error.message:
        return words(PLACES_GONE)
    return words(NOT_HELD)

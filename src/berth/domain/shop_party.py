"""What a guest chooses in the shop (the party, extras, pickup, answers, a package's includes)
and every rule it must meet, the booking core's own (OCTO's unit rules, octo/extras,
octo/pickups, octo/questions, octo/packages),
found all at once so that the form can say each one next to its field. The core checks them
again when the hold is placed; here they are only put in a guest's terms (`Rule`, worded by
the shop's pages)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from berth.domain.catalog import Catalog, ContactField, Option, Product, include_unit
from berth.domain.catalog.model import Extra, Question
from berth.domain.questions import AnswerProblem, answer_problem, booking_questions, unit_questions

# The most of one unit a guest may choose in the form: the booking core's own limit on a
# request's unit items is 200; an option without maxUnits is held to this.
MOST_OF_A_UNIT = 50


class Rule(StrEnum):
    NO_GUESTS = "no guests"
    TOO_FEW = "too few"  # the option's minUnits
    TOO_MANY = "too many"  # the option's maxUnits
    UNIT_TOO_FEW = "unit too few"  # a unit's minQuantity
    UNIT_TOO_MANY = "unit too many"  # a unit's maxQuantity
    UNACCOMPANIED = "unaccompanied"  # a unit's accompaniedBy
    EXTRA_TOO_FEW = "extra too few"
    EXTRA_TOO_MANY = "extra too many"
    PICKUP_REQUIRED = "pickup required"
    PICKUP_UNKNOWN = "pickup unknown"
    ANSWER_REQUIRED = "answer required"
    ANSWER_NOT_AN_OPTION = "answer not an option"
    ANSWER_TOO_LONG = "answer too long"
    ANSWER_WRONG_FORMAT = "answer wrong format"
    CONTACT_MISSING = "contact missing"
    CONTACT_TOO_LONG = "contact too long"
    EMAIL_INVALID = "email invalid"
    TERMS = "terms"
    INCLUDE_REQUIRED = "include required"  # a package's required include, with no time chosen
    INCLUDE_NOT_FOR_PARTY = "include not for party"  # an include that cannot book a unit of the party
    GROUP_TOO_MANY = "group too many"  # more includes of a group than its count


ANSWER_RULES = {
    AnswerProblem.NOT_AN_OPTION: Rule.ANSWER_NOT_AN_OPTION,
    AnswerProblem.TOO_LONG: Rule.ANSWER_TOO_LONG,
    AnswerProblem.WRONG_FORMAT: Rule.ANSWER_WRONG_FORMAT,
}


@dataclass(frozen=True)
class Problem:
    """A rule the guest's choice breaks, at the form field `at`, with what its words name
    (`count`, `unit`, `others`, `extra`, `question`, `most`, `include`, `group`)."""

    rule: Rule
    at: str
    values: Mapping[str, str | int] = field(default_factory=dict)


@dataclass(frozen=True)
class Choice:
    """A guest's choice for one departure: how many of each unit, how many pieces of each extra
    (per unit item extras: the pieces of the whole party), the pickup point, and the answers of
    the booking and of each unit item (in the order of `unit_items`)."""

    units: Mapping[str, int]
    extras: Mapping[str, int] = field(default_factory=dict)
    pickup_point_id: str | None = None
    answers: Mapping[str, str] = field(default_factory=dict)
    item_answers: tuple[Mapping[str, str], ...] = ()


def unit_items(option: Option, units: Mapping[str, int]) -> list[str]:
    """The unit ids of the party's unit items, in the option's order of units."""
    return [unit.id for unit in option.units for _ in range(max(units.get(unit.id, 0), 0))]


def most_of(option: Option, unit_id: str) -> int:
    """The most of a unit the form offers: its maxQuantity, the option's maxUnits, the form's cap."""
    unit = option.unit(unit_id)
    limits = [MOST_OF_A_UNIT, option.restrictions.max_units or MOST_OF_A_UNIT]
    if unit is not None and unit.restrictions.max_quantity is not None:
        limits.append(unit.restrictions.max_quantity)
    return min(limits)


def party_problems(option: Option, units: Mapping[str, int]) -> list[Problem]:
    """OCTO's unit rules (`domain.bookings.check_units`) for the party, every one it breaks."""
    counts = Counter({unit.id: units.get(unit.id, 0) for unit in option.units if units.get(unit.id, 0) > 0})
    total = sum(counts.values())
    if total == 0:
        return [Problem(Rule.NO_GUESTS, "party")]
    found = []
    limits = option.restrictions
    if limits.min_units is not None and total < limits.min_units:
        found.append(Problem(Rule.TOO_FEW, "party", {"count": limits.min_units}))
    if total > (limits.max_units or MOST_OF_A_UNIT):
        found.append(Problem(Rule.TOO_MANY, "party", {"count": limits.max_units or MOST_OF_A_UNIT}))
    for unit in option.units:
        count = counts.get(unit.id, 0)
        r = unit.restrictions
        if count and r.min_quantity is not None and count < r.min_quantity:
            found.append(
                Problem(Rule.UNIT_TOO_FEW, f"unit-{unit.id}", {"count": r.min_quantity, "unit": unit.id})
            )
        if r.max_quantity is not None and count > r.max_quantity:
            found.append(
                Problem(Rule.UNIT_TOO_MANY, f"unit-{unit.id}", {"count": r.max_quantity, "unit": unit.id})
            )
        if count and r.accompanied_by and not any(counts.get(other) for other in r.accompanied_by):
            others = ",".join(r.accompanied_by)
            found.append(Problem(Rule.UNACCOMPANIED, f"unit-{unit.id}", {"unit": unit.id, "others": others}))
    return found


def include_problems(
    catalog: Catalog, option: Option, units: Mapping[str, int], chosen: Mapping[str, str]
) -> list[Problem]:
    """octo/packages' rules for the includes `chosen` (include id -> its availability id, "" for
    one that names none): every required include, an availability for each that needs one, at
    most `count` of a group, and each unit of the party bookable on each include."""
    found = []
    for group in option.package_includes:
        for include in group.includes:
            field_name = f"include-{include.id}"
            if include.id not in chosen:
                if include.required:
                    found.append(Problem(Rule.INCLUDE_REQUIRED, field_name, {"include": include.id}))
                continue
            if include.availability_required and not chosen[include.id]:
                found.append(Problem(Rule.INCLUDE_REQUIRED, field_name, {"include": include.id}))
            product = catalog.product(include.product_id)
            included = product.option(include.option_id) if product is not None else None
            for unit in option.units:
                if units.get(unit.id) and (included is None or include_unit(included, unit) is None):
                    found.append(
                        Problem(
                            Rule.INCLUDE_NOT_FOR_PARTY, field_name, {"include": include.id, "unit": unit.id}
                        )
                    )
        picked = sum(1 for include in group.includes if include.id in chosen)
        if group.count is not None and picked > group.count:
            found.append(
                Problem(Rule.GROUP_TOO_MANY, f"group-{group.id}", {"group": group.id, "count": group.count})
            )
    return found


def extra_bounds(extra: Extra, items: int) -> tuple[int, int]:
    """The fewest and most pieces of `extra` the party may take: per booking, its min and max
    quantity; per unit item, those of each of the `items` unit items together."""
    most = extra.max_quantity if extra.max_quantity is not None else MOST_OF_A_UNIT
    if extra.per_unit:
        return extra.min_quantity * items, most * items
    return extra.min_quantity, most


def extra_problems(option: Option, items: int, pieces: Mapping[str, int]) -> list[Problem]:
    found = []
    for extra in option.extras:
        fewest, most = extra_bounds(extra, items)
        count = pieces.get(extra.id, 0)
        if count < fewest:
            found.append(
                Problem(Rule.EXTRA_TOO_FEW, f"extra-{extra.id}", {"count": fewest, "extra": extra.id})
            )
        elif count > most:
            found.append(
                Problem(Rule.EXTRA_TOO_MANY, f"extra-{extra.id}", {"count": most, "extra": extra.id})
            )
    return found


def pieces_per_item(extra: Extra, items: int, pieces: int) -> list[int]:
    """A per-unit-item extra's pieces shared out over the unit items as evenly as they go (each
    gets the floor or the ceiling of the share), so that each item's count is within the extra's
    bounds whenever the party's total is (`extra_bounds`)."""
    if items == 0:
        return []
    share, rest = divmod(pieces, items)
    return [share + (1 if index < rest else 0) for index in range(items)]


def pickup_problems(option: Option, point_id: str | None) -> list[Problem]:
    if point_id is None:
        return [Problem(Rule.PICKUP_REQUIRED, "pickup")] if option.pickup_required else []
    return [] if option.pickup_point(point_id) is not None else [Problem(Rule.PICKUP_UNKNOWN, "pickup")]


def _answer_problems(
    asked: Sequence[Question], answers: Mapping[str, str], item: int | None
) -> list[Problem]:
    found = []
    for question in asked:
        value = (answers.get(question.id) or "").strip()
        where = answer_field(question.id, item)
        if not value:
            if question.required:
                found.append(Problem(Rule.ANSWER_REQUIRED, where, {"question": question.id}))
            continue
        problem = answer_problem(question, value)
        if problem is not None:
            values: dict[str, str | int] = {"question": question.id}
            if question.max_length is not None:
                values["most"] = question.max_length
            found.append(Problem(ANSWER_RULES[problem], where, values))
    return found


def answer_field(question_id: str, item: int | None = None) -> str:
    """The form field of an answer: the booking's, or the `item`-th unit item's."""
    return f"answer-{question_id}" if item is None else f"answer-{item}-{question_id}"


def answers_problems(product: Product, option: Option, choice: Choice) -> list[Problem]:
    """Required questions left unanswered, and answers that break a question's rules, of the
    booking and of each of its unit items."""
    found = _answer_problems(booking_questions(product, option), choice.answers, None)
    for index, unit_id in enumerate(unit_items(option, choice.units)):
        unit = option.unit(unit_id)
        assert unit is not None
        asked = unit_questions(product, option, unit)
        if not asked:
            continue
        given = choice.item_answers[index] if index < len(choice.item_answers) else {}
        found += _answer_problems(asked, given, index)
    return found


def choice_problems(product: Product, option: Option, choice: Choice) -> list[Problem]:
    """Every rule the choice breaks; none: the booking core takes it (places permitting)."""
    found = party_problems(option, choice.units)
    items = len(unit_items(option, choice.units))
    found += extra_problems(option, items, choice.extras)
    found += pickup_problems(option, choice.pickup_point_id)
    found += answers_problems(product, option, choice)
    return found


# The guest's details the shop always asks for: a name for the tickets, an email address for
# the receipt and the "manage my booking" link.
ALWAYS_ASKED = (ContactField.firstName, ContactField.lastName, ContactField.emailAddress)
# The details the shop's form can ask for, in its order.
CONTACT_FIELDS = (*ALWAYS_ASKED, ContactField.phoneNumber, ContactField.country, ContactField.postalCode)
CONTACT_LENGTH = 200


def required_contact(option: Option, unit_ids: Sequence[str]) -> list[ContactField]:
    """The details the guest must give: the shop's own, the option's, and the units' (which the
    lead guest's details stand for), among those the form asks."""
    wanted = set(ALWAYS_ASKED) | set(option.required_contact_fields)
    for unit_id in unit_ids:
        unit = option.unit(unit_id)
        wanted |= set(unit.required_contact_fields) if unit is not None else set()
    return [f for f in CONTACT_FIELDS if f in wanted]


def contact_problems(
    required: Sequence[ContactField], values: Mapping[str, str], *, email_ok: bool, accepted: bool
) -> list[Problem]:
    """What the guest's details lack: a `required` one left empty, one too long, an email
    address mail cannot be sent to (`email_ok`), the terms not accepted."""
    found = []
    for contact_field in CONTACT_FIELDS:
        value = values.get(contact_field.value, "").strip()
        if not value:
            if contact_field in required:
                found.append(Problem(Rule.CONTACT_MISSING, contact_field.value))
        elif len(value) > CONTACT_LENGTH:
            found.append(Problem(Rule.CONTACT_TOO_LONG, contact_field.value, {"most": CONTACT_LENGTH}))
        elif contact_field is ContactField.emailAddress and not email_ok:
            found.append(Problem(Rule.EMAIL_INVALID, contact_field.value))
    if not accepted:
        found.append(Problem(Rule.TERMS, "terms"))
    return found

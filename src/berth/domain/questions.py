"""Which questions (octo/questions) a booking and its unit items are asked, and which rule an
answer breaks: pure, for the capability's checks and the shop's form alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from berth.domain.catalog import Option, Product, Unit
from berth.domain.catalog.model import AnswerFormat, Question, QuestionInputType

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def booking_questions(product: Product, option: Option) -> list[Question]:
    """Asked once per booking: the product's, then the option's, that are not per unit."""
    return [q for q in (*product.questions, *option.questions) if not q.per_unit]


def unit_questions(product: Product, option: Option, unit: Unit) -> list[Question]:
    """Asked for each unit item of `unit`: the product's and option's per-unit questions, then
    the unit's own."""
    return [q for q in (*product.questions, *option.questions) if q.per_unit] + list(unit.questions)


def _is_number(value: str) -> bool:
    try:
        number = Decimal(value)
    except InvalidOperation:
        return False
    return number.is_finite()


def _is_date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


FORMATS: dict[AnswerFormat, Callable[[str], bool]] = {
    AnswerFormat.text: lambda value: True,
    AnswerFormat.date: _is_date,
    AnswerFormat.number: _is_number,
    AnswerFormat.email: lambda value: bool(_EMAIL.match(value)),
}


class AnswerProblem(StrEnum):
    NOT_AN_OPTION = "not an option"  # radio or select: not the value of one of its options
    TOO_LONG = "too long"  # longer than the question's maxLength
    WRONG_FORMAT = "wrong format"  # not a date, a number or an email address as asked


def answer_problem(question: Question, value: str) -> AnswerProblem | None:
    """The rule `value` breaks as an answer to `question`, if any."""
    if question.input_type is not QuestionInputType.textArea:
        return None if value in (o.value for o in question.select_options) else AnswerProblem.NOT_AN_OPTION
    if question.max_length is not None and len(value) > question.max_length:
        return AnswerProblem.TOO_LONG
    return None if FORMATS[question.format](value) else AnswerProblem.WRONG_FORMAT

"""Which questions a booking and its unit items are asked, how OCTO shows them, and what an
answer must be."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from decimal import Decimal, InvalidOperation

from berth.capabilities.base import JSON
from berth.domain.catalog import Option, Product, Unit
from berth.domain.catalog.model import AnswerFormat, Question, QuestionInputType
from berth.domain.errors import BadRequest

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_FORMAT_NAMES = {
    AnswerFormat.date: "a date (YYYY-MM-DD)",
    AnswerFormat.number: "a number",
    AnswerFormat.email: "an email address",
}


def booking_questions(product: Product, option: Option) -> list[Question]:
    """Asked once per booking: the product's, then the option's, that are not per unit."""
    return [q for q in (*product.questions, *option.questions) if not q.per_unit]


def unit_questions(product: Product, option: Option, unit: Unit) -> list[Question]:
    """Asked for each unit item of `unit`: the product's and option's per-unit questions, then
    the unit's own."""
    return [q for q in (*product.questions, *option.questions) if q.per_unit] + list(unit.questions)


def label(question: Question) -> str:
    return f"{question.title!r} ({question.id})"


def question_view(question: Question) -> JSON:
    """OCTO `Question`."""
    return {
        "id": question.id,
        "label": question.title,
        "title": question.title,
        "shortDescription": question.short_description,
        "description": question.description,
        "internalName": question.internal_name,
        "inputType": str(question.input_type),
        "maxLength": question.max_length,
        "required": question.required,
        "selectOptions": [{"label": o.label, "value": o.value} for o in question.select_options],
        "coverImageUrl": question.cover_image_url,
    }


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


_FORMATS: dict[AnswerFormat, Callable[[str], bool]] = {
    AnswerFormat.text: lambda value: True,
    AnswerFormat.date: _is_date,
    AnswerFormat.number: _is_number,
    AnswerFormat.email: lambda value: bool(_EMAIL.match(value)),
}


def check_answer(question: Question, value: str, where: str) -> None:
    """BAD_REQUEST naming the question (and `where` the answer was sent) for an answer the
    question does not take: not one of its options, not in its format, or too long."""
    if question.input_type is not QuestionInputType.textArea:
        allowed = [o.value for o in question.select_options]
        if value not in allowed:
            raise BadRequest(
                f"{where}: {value!r} is not an option of question {label(question)}; "
                f"answer one of: {', '.join(allowed)}",
                questionId=question.id,
            )
        return
    if question.max_length is not None and len(value) > question.max_length:
        raise BadRequest(
            f"{where}: the answer to question {label(question)} is {len(value)} characters long; "
            f"at most {question.max_length} are allowed",
            questionId=question.id,
        )
    if not _FORMATS[question.format](value):
        raise BadRequest(
            f"{where}: the answer to question {label(question)} must be {_FORMAT_NAMES[question.format]}; "
            f"{value!r} given",
            questionId=question.id,
        )

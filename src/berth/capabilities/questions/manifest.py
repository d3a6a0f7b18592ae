"""The answers of the bookings on a departure, for the manifest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from berth.capabilities.ids import QUESTIONS
from berth.capabilities.questions.extension import Answers
from berth.domain.questions import booking_questions, unit_questions
from berth.read_models.bookings import BookingDetails


@dataclass(frozen=True)
class Answered:
    """One answer: for the booking (`ticket` None) or for one of its tickets (unit items)."""

    ticket: str | None
    unit: str | None
    question: str
    value: str


def answered(details: BookingDetails) -> list[Answered]:
    """The booking's answers, then its tickets', in the order the questions are asked."""
    answers = Answers.from_document(details.booking.extensions.get(QUESTIONS))
    found = [
        Answered(None, None, q.title, answers.booking[q.id])
        for q in booking_questions(details.product, details.option)
        if q.id in answers.booking
    ]
    for item in details.booking.unit_items:
        unit = details.option.unit(item.unit_id)
        if unit is None:
            continue
        given = answers.of_item(item.uuid)
        found.extend(
            Answered(item.supplier_reference, unit.internal_name, q.title, given[q.id])
            for q in unit_questions(details.product, details.option, unit)
            if q.id in given
        )
    return found


def answers_on(travelling: Sequence[BookingDetails]) -> list[tuple[BookingDetails, list[Answered]]]:
    """The bookings of `travelling` that answered anything, with their answers."""
    return [(details, found) for details in travelling if (found := answered(details))]

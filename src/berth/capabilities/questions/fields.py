"""octo/questions: `questions` on options (asked per booking) and units (asked per unit item),
and `questionAnswers` on bookings and unit items: every question asked, with its answer or null."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import QUESTIONS
from berth.capabilities.questions.asked import question_view
from berth.capabilities.questions.extension import ANSWERS, Answers, Given
from berth.capabilities.questions.manifest import Answered, answers_on
from berth.domain.bookings import UnitItem
from berth.domain.catalog import Option, Product, Unit
from berth.domain.catalog.model import Question
from berth.domain.questions import booking_questions, unit_questions
from berth.domain.tickets import TicketLine

if TYPE_CHECKING:
    from berth.read_models.bookings import BookingDetails


def answers_view(questions: Sequence[Question], given: Given) -> list[JSON]:
    """OCTO `QuestionAnswer` for each question asked."""
    return [{"questionId": q.id, "question": question_view(q), "value": given.get(q.id)} for q in questions]


class QuestionsCapability(Capability):
    id = QUESTIONS
    docs = "https://docs.ventrata.com/capabilities/questions"
    booking_request_fields = frozenset({ANSWERS})
    unit_item_request_fields = frozenset({ANSWERS})

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        out["questions"] = [question_view(q) for q in booking_questions(product, option)]

    def unit_fields(self, product: Product, option: Option, unit: Unit, out: JSON, view: View) -> None:
        out["questions"] = [question_view(q) for q in unit_questions(product, option, unit)]

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        given = Answers.from_document(details.booking.extensions.get(QUESTIONS)).booking
        out[ANSWERS] = answers_view(booking_questions(details.product, details.option), given)

    def unit_item_fields(self, details: BookingDetails, item: UnitItem, out: JSON, view: View) -> None:
        unit = details.option.unit(item.unit_id)
        asked = unit_questions(details.product, details.option, unit) if unit is not None else []
        given = Answers.from_document(details.booking.extensions.get(QUESTIONS)).of_item(item.uuid)
        out[ANSWERS] = answers_view(asked, given)

    def booking_lines(self, details: BookingDetails, item: UnitItem | None) -> list[TicketLine]:
        """The answers given for the booking or for the ticket `item`: for staff only (a date
        of birth is not printed on a ticket)."""
        answers = Answers.from_document(details.booking.extensions.get(QUESTIONS))
        if item is None:
            given, asked = answers.booking, booking_questions(details.product, details.option)
        else:
            unit = details.option.unit(item.unit_id)
            given = answers.of_item(item.uuid)
            asked = unit_questions(details.product, details.option, unit) if unit is not None else []
        return [TicketLine(q.title, given[q.id], staff_only=True) for q in asked if q.id in given]

    def departure_part(
        self, option: Option, travelling: Sequence[BookingDetails]
    ) -> list[tuple[BookingDetails, list[Answered]]] | None:
        return answers_on(travelling) or None

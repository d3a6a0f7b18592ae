"""The answers of a booking and its unit items: read from questionAnswers (on the booking and
on each unit item) at reserve, update and confirm, checked against the questions asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.capabilities.ids import QUESTIONS
from berth.capabilities.questions.asked import check_answer, label
from berth.domain.bookings import BookingStatus, UnitItem
from berth.domain.catalog import Option, Product
from berth.domain.catalog.model import Question
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.questions import booking_questions, unit_questions
from berth.services.bookings.extensions import BookingExtension, ExtensionStep, Stage

ANSWERS = "questionAnswers"
# Answers by question id.
Given = dict[str, str]


@dataclass(frozen=True)
class Answers:
    """A booking's answers: its own, and each unit item's by the item's uuid."""

    booking: Given = field(default_factory=dict)
    items: dict[str, Given] = field(default_factory=dict)

    @classmethod
    def from_document(cls, document: Any) -> Answers:
        if not document:
            return cls()
        return cls(
            booking=dict(document.get("booking", {})),
            items={uuid: dict(given) for uuid, given in document.get("items", {}).items()},
        )

    def to_document(self) -> dict[str, Any] | None:
        items = {uuid: given for uuid, given in self.items.items() if given}
        if not self.booking and not items:
            return None
        return {"booking": self.booking, "items": items}

    def of_item(self, item_uuid: str) -> Given:
        return self.items.get(item_uuid, {})


def _answer(
    given: Given,
    asked: Mapping[str, Question],
    sent: Sequence[Mapping[str, Any]],
    where: str,
    elsewhere: Mapping[str, Question],
    context: str,
) -> None:
    """Apply the answers `sent` to `given` (null or blank: no answer); `elsewhere` are the
    questions of the option asked at the other level, named in the error for a misplaced one."""
    seen: set[str] = set()
    for index, answer in enumerate(sent):
        at = f"{where}[{index}]"
        question_id = answer["questionId"]
        if question_id in seen:
            raise BadRequest(f"{at}: question {question_id!r} is answered twice", questionId=question_id)
        seen.add(question_id)
        question = asked.get(question_id)
        if question is None:
            if question_id in elsewhere:
                other = (
                    "per unit item, in unitItems[].questionAnswers"
                    if where == ANSWERS
                    else "per booking, in questionAnswers"
                )
                message = f"{at}: question {label(elsewhere[question_id])} is answered {other}"
            else:
                message = f"{at}: {question_id!r} is not a question {context}"
            raise BadRequest(message, questionId=question_id)
        value = (answer.get("value") or "").strip()
        if not value:
            given.pop(question_id, None)
            continue
        check_answer(question, value, at)
        given[question_id] = value


def merge(product: Product, option: Option, items: Sequence[UnitItem], kept: Answers, sent: Any) -> Answers:
    """The answers after a request: what it answers replaces what was kept, what it leaves out
    stays; answers to questions no longer asked (another option, a unit item gone) are dropped."""
    sent = sent or {}
    asked = {q.id: q for q in booking_questions(product, option)}
    per_unit = {q.id: q for unit in option.units for q in unit_questions(product, option, unit)}
    booking = {qid: value for qid, value in kept.booking.items() if qid in asked}
    _answer(booking, asked, sent.get(ANSWERS) or (), ANSWERS, per_unit, f"of option {option.id!r}")
    sent_items = sent.get("unitItems")
    answers: dict[str, Given] = {}
    for index, item in enumerate(items):
        unit = option.unit(item.unit_id)
        of_unit = {q.id: q for q in unit_questions(product, option, unit)} if unit is not None else {}
        given = {qid: value for qid, value in kept.of_item(item.uuid).items() if qid in of_unit}
        if sent_items is not None:
            where = f"unitItems[{index}].{ANSWERS}"
            context = f"for unit {item.unit_id!r}"
            _answer(given, of_unit, sent_items[index].get(ANSWERS) or (), where, asked, context)
        answers[item.uuid] = given
    return Answers(booking, answers)


def unanswered(product: Product, option: Option, items: Sequence[UnitItem], answers: Answers) -> list[str]:
    """The required questions without an answer, named, with the unit item they are asked for."""
    missing = [
        label(q) for q in booking_questions(product, option) if q.required and q.id not in answers.booking
    ]
    for index, item in enumerate(items):
        unit = option.unit(item.unit_id)
        if unit is None:
            continue
        given = answers.of_item(item.uuid)
        missing.extend(
            f"unitItems[{index}]: {label(q)}"
            for q in unit_questions(product, option, unit)
            if q.required and q.id not in given
        )
    return missing


class QuestionExtension(BookingExtension):
    key = QUESTIONS

    def apply(self, step: ExtensionStep) -> dict[str, Any] | None:
        booking = step.booking
        if step.stage is Stage.RESERVE and step.sent is None:
            missing = unanswered(step.product, step.option, booking.unit_items, Answers())
            if missing:
                raise UnprocessableEntity(
                    f"Option {step.option.id!r} of product {step.product.id!r} has required questions, "
                    "which only octo/questions can answer: request the octo/questions capability "
                    "(Octo-Capabilities), else the booking could never be confirmed. Required: "
                    + "; ".join(missing)
                )
        answers = merge(
            step.product,
            step.option,
            booking.unit_items,
            Answers.from_document(step.kept(QUESTIONS)),
            step.sent,
        )
        if step.stage is Stage.CONFIRM or booking.status is not BookingStatus.ON_HOLD:
            missing = unanswered(step.product, step.option, booking.unit_items, answers)
            if missing:
                raise UnprocessableEntity(
                    "Required questions are not answered: "
                    + "; ".join(missing)
                    + ". Request octo/questions and send their questionAnswers"
                )
        return answers.to_document()

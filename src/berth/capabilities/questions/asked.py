"""How OCTO shows a question, and an answer's refusal in OCTO's words (which questions are
asked, and the rules of answers, are `berth.domain.questions`)."""

from __future__ import annotations

from berth.capabilities.base import JSON
from berth.domain.catalog.model import AnswerFormat, Question
from berth.domain.errors import BadRequest
from berth.domain.questions import AnswerProblem, answer_problem

_FORMAT_NAMES = {
    AnswerFormat.date: "a date (YYYY-MM-DD)",
    AnswerFormat.number: "a number",
    AnswerFormat.email: "an email address",
}


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


def check_answer(question: Question, value: str, where: str) -> None:
    """BAD_REQUEST naming the question (and `where` the answer was sent) for an answer the
    question does not take: not one of its options, not in its format, or too long."""
    problem = answer_problem(question, value)
    if problem is AnswerProblem.NOT_AN_OPTION:
        allowed = [o.value for o in question.select_options]
        raise BadRequest(
            f"{where}: {value!r} is not an option of question {label(question)}; "
            f"answer one of: {', '.join(allowed)}",
            questionId=question.id,
        )
    if problem is AnswerProblem.TOO_LONG:
        raise BadRequest(
            f"{where}: the answer to question {label(question)} is {len(value)} characters long; "
            f"at most {question.max_length} are allowed",
            questionId=question.id,
        )
    if problem is AnswerProblem.WRONG_FORMAT:
        raise BadRequest(
            f"{where}: the answer to question {label(question)} must be {_FORMAT_NAMES[question.format]}; "
            f"{value!r} given",
            questionId=question.id,
        )

"""octo/questions without I/O: the catalogue rules of questions, which questions are asked
where, how answers are checked and merged, and which required ones are missing."""

from __future__ import annotations

from typing import Any

import pytest

from berth.capabilities.questions.asked import check_answer
from berth.capabilities.questions.extension import Answers, merge, unanswered
from berth.domain.bookings import UnitItem
from berth.domain.catalog.document import CatalogFileError
from berth.domain.errors import BadRequest
from berth.domain.questions import booking_questions, unit_questions
from tests.builders import catalog, option, price, product, question, unit
from tests.questions_helpers import BORN, DIET, NOTES, PHOTOS, SWIM, WAIVER, WEIGHT, questions_catalog

KAYAK = questions_catalog().products[-1]
DEFAULT, GUIDED = KAYAK.options
PADDLER = DEFAULT.units[0]
Q1 = "b0000000-0000-4000-8000-000000000001"


def problems(*options: dict[str, Any], **extra: Any) -> list[str]:
    with pytest.raises(CatalogFileError) as raised:
        catalog(product("trip", options=list(options) or [option()], **extra))
    return [p.message for p in raised.value.problems]


def test_catalogue_rules() -> None:
    assert problems(option(questions=[question("swim", "Swim?")])) == [
        "question ids are UUIDs (OCTO Question.id); 'swim' is not"
    ]
    assert problems(option(questions=[question(Q1, "Swim?", input_type="radio")])) == [
        "a radio question needs selectOptions"
    ]
    assert problems(option(questions=[question(Q1, "Notes", options=["a"])])) == [
        "a textArea question is answered with text: no selectOptions"
    ]
    assert problems(
        option(questions=[question(Q1, "Pick", input_type="select", options=["a"], format="date")])
    ) == ["format is for textArea questions"]
    assert problems(option(questions=[question(Q1, "Pick", input_type="select", options=["a", "a"])])) == [
        "duplicate option value 'a'"
    ]
    assert problems(option(questions=[question(Q1, "A"), question(Q1, "B")])) == [
        f"duplicate question id {Q1!r}"
    ]
    assert problems(option(questions=[question(Q1, "A")]), questions=[question(Q1, "B")]) == [
        f"question id {Q1!r} is already a question of the product"
    ]
    with_unit = {**unit(prices=[price(2500)]), "questions": [question(Q1, "A", perUnit=False)]}
    assert set(problems(option(units=[with_unit], questions=[question(Q1, "B")]))) == {
        "a unit's questions are asked for each unit item",
        f"question id {Q1!r} is already a question of the product or option",
    }


def test_questions_asked_per_booking_and_per_unit_item() -> None:
    assert [q.id for q in booking_questions(KAYAK, DEFAULT)] == [WAIVER, SWIM, DIET, NOTES]
    assert [q.id for q in unit_questions(KAYAK, DEFAULT, PADDLER)] == [BORN, PHOTOS, WEIGHT]
    assert [q.id for q in booking_questions(KAYAK, GUIDED)] == [WAIVER]


@pytest.mark.parametrize(
    ("question_id", "good", "bad"),
    [
        (BORN, ["2000-02-29", "1990-12-31"], ["2001-02-29", "1990-1-1", "19900101", "yesterday"]),
        (WEIGHT, ["70", "-1", "72.5", "1e2"], ["seventy", "NaN", "Infinity", "1,5", ""]),
        (PHOTOS, ["a@b.co", "first.last+tag@mail.example.com"], ["a@b", "@b.co", "a b@c.de"]),
        (SWIM, ["yes", "no"], ["Yes", "y", "maybe"]),
        (NOTES, ["x" * 20], ["x" * 21]),
    ],
)
def test_answers_by_type(question_id: str, good: list[str], bad: list[str]) -> None:
    asked = {q.id: q for q in (*booking_questions(KAYAK, DEFAULT), *unit_questions(KAYAK, DEFAULT, PADDLER))}
    for value in good:
        check_answer(asked[question_id], value, "here")
    for value in bad:
        with pytest.raises(BadRequest):
            check_answer(asked[question_id], value, "here")


def test_merge_and_unanswered() -> None:
    items = (UnitItem("u1", "paddler", "R1"), UnitItem("u2", "paddler", "R2"))
    kept = Answers({SWIM: "yes", "gone": "x"}, {"u1": {BORN: "1990-01-01"}, "u0": {BORN: "1980-01-01"}})
    merged = merge(KAYAK, DEFAULT, items, kept, {"questionAnswers": [{"questionId": DIET, "value": "vegan"}]})
    # Answers to questions no longer asked and to items gone are dropped.
    assert merged == Answers({SWIM: "yes", DIET: "vegan"}, {"u1": {BORN: "1990-01-01"}, "u2": {}})
    assert unanswered(KAYAK, DEFAULT, items, merged) == [
        f"'I accept the risks of sea kayaking' ({WAIVER})",
        f"unitItems[1]: 'Date of birth' ({BORN})",
    ]
    cleared = merge(KAYAK, DEFAULT, items, merged, {"questionAnswers": [{"questionId": SWIM, "value": " "}]})
    assert SWIM not in cleared.booking
    assert Answers().to_document() is None
    assert Answers.from_document(merged.to_document()) == Answers(
        merged.booking, {"u1": {BORN: "1990-01-01"}}
    )

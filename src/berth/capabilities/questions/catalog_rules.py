"""octo/questions' catalogue rules: questions of products, options and units."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from berth.domain.catalog import Option, Product
from berth.domain.catalog.model import AnswerFormat, Question, QuestionInputType
from berth.domain.catalog.rules import CatalogRule, Path, Problem, duplicate_ids


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return len(value) == 36


def _question_problems(questions: Sequence[Question], path: Path, *, unit: bool) -> list[Problem]:
    problems: list[Problem] = []
    for index, question in enumerate(questions):
        q_path: Path = (*path, index)
        if not _is_uuid(question.id):
            problems.append(
                ((*q_path, "id"), f"question ids are UUIDs (OCTO Question.id); {question.id!r} is not")
            )
        if unit and question.per_unit is False:
            problems.append(((*q_path, "perUnit"), "a unit's questions are asked for each unit item"))
        choices = question.input_type is not QuestionInputType.textArea
        if choices and not question.select_options:
            problems.append(
                ((*q_path, "selectOptions"), f"a {question.input_type} question needs selectOptions")
            )
        if not choices and question.select_options:
            problems.append(
                ((*q_path, "selectOptions"), "a textArea question is answered with text: no selectOptions")
            )
        if choices and question.format is not AnswerFormat.text:
            problems.append(((*q_path, "format"), "format is for textArea questions"))
        values = [o.value for o in question.select_options]
        problems.extend(
            ((*q_path, "selectOptions", i, "value"), f"duplicate option value {v!r}")
            for i, v in enumerate(values)
            if v in values[:i]
        )
    return problems


class QuestionRules(CatalogRule):
    """Answers are keyed by question id: one id names one question among those a booking of an
    option is asked (the product's, the option's and its units')."""

    def product_problems(self, product: Product, path: Path) -> list[Problem]:
        q_path: Path = (*path, "questions")
        return [
            *_question_problems(product.questions, q_path, unit=False),
            *duplicate_ids([q.id for q in product.questions], q_path, "question"),
        ]

    def option_problems(self, product: Product, option: Option, path: Path) -> list[Problem]:
        q_path: Path = (*path, "questions")
        problems = [
            *_question_problems(option.questions, q_path, unit=False),
            *duplicate_ids([q.id for q in option.questions], q_path, "question"),
        ]
        of_product = {q.id for q in product.questions}
        problems.extend(
            ((*q_path, i, "id"), f"question id {q.id!r} is already a question of the product")
            for i, q in enumerate(option.questions)
            if q.id in of_product
        )
        shared = of_product | {q.id for q in option.questions}
        for u_index, unit in enumerate(option.units):
            u_path: Path = (*path, "units", u_index, "questions")
            problems.extend(_question_problems(unit.questions, u_path, unit=True))
            problems.extend(duplicate_ids([q.id for q in unit.questions], u_path, "question"))
            problems.extend(
                ((*u_path, i, "id"), f"question id {q.id!r} is already a question of the product or option")
                for i, q in enumerate(unit.questions)
                if q.id in shared
            )
        return problems

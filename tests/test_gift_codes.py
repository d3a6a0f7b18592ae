"""A gift voucher's code (berth.domain.gift_codes): 128 bits in Crockford's base 32 with two
check digits, grouped for people; read back whatever case, spaces and dashes they type, and the
look-alike letters Crockford maps; any one mistyped or swapped character refused."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.gift_codes import (
    ALPHABET,
    BITS,
    NotAGiftCode,
    code_digest,
    code_hint,
    encode,
    new_code,
    parse_code,
)

SHAPE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){6}$")
numbers = st.integers(min_value=0, max_value=2**BITS - 1)


def plain(code: str) -> str:
    return code.replace("-", "")


def test_a_new_code_is_seven_groups_of_four_and_reads_back() -> None:
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200
    for code in codes:
        assert SHAPE.match(code), code
        assert parse_code(code) == code


@given(numbers)
def test_every_128_bit_number_has_a_code_that_reads_back(number: int) -> None:
    code = encode(number)
    assert SHAPE.match(code) and parse_code(code) == code


@given(numbers, st.sampled_from(["", " ", "-", "  ", " - "]), st.booleans())
def test_case_spaces_and_dashes_do_not_matter(number: int, separator: str, lower: bool) -> None:
    code = encode(number)
    typed = separator.join(plain(code)[i : i + 4] for i in range(0, 28, 4))
    assert parse_code(typed.lower() if lower else typed) == code
    assert parse_code(f"  {plain(code)}\n") == code


@given(numbers, st.data())
def test_the_letters_people_mistake_for_digits_read_as_those_digits(number: int, data: st.DataObject) -> None:
    code = encode(number)
    typed = plain(code)
    swaps = {"0": "oO", "1": "iIlL"}
    typed = "".join(data.draw(st.sampled_from(swaps[c])) if c in swaps else c for c in typed)
    assert parse_code(typed) == code


@given(numbers, st.integers(min_value=0, max_value=27), st.data())
def test_one_mistyped_character_is_refused(number: int, position: int, data: st.DataObject) -> None:
    typed = plain(encode(number))
    wrong = data.draw(st.sampled_from([c for c in ALPHABET if c != typed[position]]))
    mistyped = typed[:position] + wrong + typed[position + 1 :]
    with pytest.raises(NotAGiftCode):
        parse_code(mistyped)


@given(numbers, st.integers(min_value=0, max_value=26))
def test_two_neighbours_swapped_are_refused(number: int, position: int) -> None:
    typed = plain(encode(number))
    if typed[position] == typed[position + 1]:
        return
    swapped = typed[:position] + typed[position + 1] + typed[position] + typed[position + 2 :]
    with pytest.raises(NotAGiftCode):
        parse_code(swapped)


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("", "no gift code was given"),
        ("  - ", "no gift code was given"),
        ("ABCD-EFGH", "has 28 letters and digits, this one has 8"),
        ("ABCD-EFGH-UUUU-!!!!", "not '!U'"),
        ("7" * 28, "mistyped"),  # above 128 bits
    ],
)
def test_what_is_not_a_code_says_why(typed: str, why: str) -> None:
    with pytest.raises(NotAGiftCode, match=re.escape(why)):
        parse_code(typed)


def test_the_store_finds_a_code_by_its_digest_and_shows_its_last_group() -> None:
    code = encode(2**127 + 12345)
    assert code_digest(code) == code_digest(parse_code(code.lower())) and len(code_digest(code)) == 64
    assert code_hint(code) == code[-4:]
    with pytest.raises(ValueError, match="128-bit"):
        encode(2**BITS)

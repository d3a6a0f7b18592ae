"""A gift voucher's code: 128 bits from `secrets`, written for people to read aloud and type.

The code is the 128-bit number in Crockford's base 32 (26 digits, 0-9 and A-Z without I, L, O
and U), followed by two check digits (the number modulo 1021, a prime: every change of one
digit and every swap of two neighbouring digits changes it), 28 characters shown in seven
groups of four: `4ZQ7-H2MV-...`. Reading it back forgives what people do: lower case, spaces,
dashes, and the letters Crockford maps to the digits they look like (I and L are 1, O is 0).
Only its SHA-256 finds it in the store (`code_digest`); the code itself is sealed there."""

from __future__ import annotations

import hashlib
import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BITS = 128
DIGITS = 26  # 32**26 = 2**130: every 128-bit number fits
CHECK_MODULUS = 1021
CHECK_DIGITS = 2
LENGTH = DIGITS + CHECK_DIGITS
GROUP = 4
_VALUES = {character: value for value, character in enumerate(ALPHABET)}
_VALUES.update({"O": 0, "I": 1, "L": 1})
_IGNORED = str.maketrans("", "", " -_\t\n.")


class NotAGiftCode(ValueError):
    """Text that cannot be a gift code; the message says why, for the person who typed it."""


def _digits(value: int, count: int) -> str:
    out = []
    for _ in range(count):
        value, rest = divmod(value, 32)
        out.append(ALPHABET[rest])
    return "".join(reversed(out))


def _value(digits: str) -> int:
    value = 0
    for character in digits:
        value = value * 32 + _VALUES[character]
    return value


def encode(number: int) -> str:
    """The code of a 128-bit number, grouped: `XXXX-XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`."""
    if not 0 <= number < 2**BITS:
        raise ValueError("a gift code holds a 128-bit number")
    plain = _digits(number, DIGITS) + _digits(number % CHECK_MODULUS, CHECK_DIGITS)
    return "-".join(plain[i : i + GROUP] for i in range(0, LENGTH, GROUP))


def new_code() -> str:
    """A new code: 128 bits from the system's randomness."""
    return encode(secrets.randbits(BITS))


def parse_code(text: str) -> str:
    """The code `text` means, grouped as `encode` writes it; NotAGiftCode saying why not."""
    plain = text.upper().translate(_IGNORED)
    if not plain:
        raise NotAGiftCode("no gift code was given")
    wrong = sorted({c for c in plain if c not in _VALUES})
    if wrong:
        raise NotAGiftCode(
            f"a gift code has only the letters and digits printed on the voucher, not {''.join(wrong)!r}"
        )
    if len(plain) != LENGTH:
        raise NotAGiftCode(f"a gift code has {LENGTH} letters and digits, this one has {len(plain)}")
    number = _value(plain[:DIGITS])
    if number >= 2**BITS or _value(plain[DIGITS:]) != number % CHECK_MODULUS:
        raise NotAGiftCode("this is not a gift code as printed: a letter or digit is mistyped")
    return encode(number)


def code_digest(code: str) -> str:
    """What the store finds a code by: the SHA-256 of its grouped form. A code is 128 random
    bits, so no salt or stretching is needed (as for API keys)."""
    return hashlib.sha256(code.encode()).hexdigest()


def code_hint(code: str) -> str:
    """The last group, which staff and emails may show without giving the code away."""
    return code[-GROUP:]

"""The header fields of a guest's email, written out by Berth itself so that no input can break
a line in them.

The email package is not given header values to parse: its parser decodes RFC 2047 encoded
words (`=?utf-8?q?...=0D=0A...?=`) in a display name or a subject, and writes what they hold
back out raw, line breaks included. Here each value is first made one line of text (every
control character, line separator and run of white space made one space), then written as it
is when it is printable ASCII that no mail program reads as an encoded word, else as encoded
words of its own (base64 of UTF-8), which mail programs decode back to that same text.
`check_rendered` looks at the message as it is about to be sent, as a last check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from email.charset import Charset
from email.policy import Policy
from itertools import chain, repeat

from berth.delivery.mail.compose import mail_address, one_line

LINE = 78  # RFC 5322's recommended line length
WORD = 75  # RFC 2047's longest encoded word
HEADER_LIMIT = 500  # characters of text in one header value
_PRINTABLE = re.compile(r"[ -~]*")
_UTF8 = Charset("utf-8")


class UnsafeMessage(Exception):
    """A message that is not to be sent as written: its header fields could be broken."""


@dataclass(frozen=True)
class Field:
    """A header field written out already. The email package stores a value that has a `name`
    as a header object of its own and writes it with `fold` (email.policy.EmailPolicy)."""

    name: str
    lines: tuple[str, ...]  # the folded value: its first line, then each continuation line

    def fold(self, *, policy: Policy) -> str:
        return f"{self.name}: " + policy.linesep.join(self.lines) + policy.linesep

    def __str__(self) -> str:
        return "".join(self.lines)


def _plain(text: str) -> bool:
    """Whether text may be written as it is: printable ASCII, and no encoded word in it."""
    return _PRINTABLE.fullmatch(text) is not None and "=?" not in text


def _folded(name: str, tokens: Sequence[str]) -> tuple[str, ...]:
    """Tokens separated by single spaces, a line broken before a token that would pass LINE."""
    lines: list[str] = []
    line = ""
    used = len(name) + 2
    for token in tokens:
        if line and used + len(line) + 1 + len(token) > LINE:
            lines.append(line)
            line, used = "", 0
        line = f"{line} {token}" if line else (token if not lines else f" {token}")
    return (*lines, line)


def _encoded_words(name: str, text: str) -> list[str]:
    first = min(WORD, LINE - len(name) - 2)
    return [word or "" for word in _UTF8.header_encode_lines(text, chain([first], repeat(WORD)))]


def unstructured(name: str, value: str | None, limit: int = HEADER_LIMIT) -> Field:
    """A text field (Subject): the text made one line, written plain or as encoded words."""
    text = one_line(value, limit)
    tokens = text.split(" ") if _plain(text) else _encoded_words(name, text)
    return Field(name, _folded(name, tokens))


def address(value: str) -> str:
    """An address for a header as it is, or UnsafeMessage: one `mail_address` takes as it is."""
    if mail_address(value)[0] != value:
        raise UnsafeMessage(f"not sent: the address {value!r} cannot be written in a header")
    return value


def mailbox(name: str, display_name: str | None, addr_spec: str) -> Field:
    """An address field (From, To, Reply-To): `"Display Name" <address>`, the name a quoted
    string when it is plain (folded at its spaces, which unfolding gives back), else encoded
    words."""
    text = one_line(display_name, HEADER_LIMIT)
    if not text:
        return Field(name, (address(addr_spec),))
    spec = f"<{address(addr_spec)}>"
    if _plain(text):
        words = ('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"').split(" ")
    else:
        words = _encoded_words(name, text)
    return Field(name, _folded(name, [*words, spec]))


def token(name: str, value: str) -> Field:
    """A field whose value Berth makes itself (a date, a Message-ID, a language tag): refused
    unless it is printable ASCII."""
    if not value or _PRINTABLE.fullmatch(value) is None:
        raise UnsafeMessage(f"the {name} header's value {value!r} is not printable ASCII")
    return Field(name, (value,))


def check_rendered(data: bytes, names: Sequence[str]) -> None:
    """Refuse (UnsafeMessage) a message about to be sent unless every line of it ends with
    CRLF (no bare CR or LF, in its header fields or its parts') and its header block holds
    exactly the fields `names`, in that order, and no NUL."""
    if data.count(b"\r") != data.count(b"\r\n") or data.count(b"\n") != data.count(b"\r\n"):
        raise UnsafeMessage("not sent: the message holds a bare CR or LF (a broken header line)")
    head, blank, _ = data.partition(b"\r\n\r\n")
    if not blank:
        raise UnsafeMessage("not sent: the message has no blank line after its header fields")
    found: list[str] = []
    for line in head.split(b"\r\n"):
        if b"\0" in line:
            raise UnsafeMessage("not sent: a header field holds a NUL")
        if line[:1] in (b" ", b"\t") and found:
            continue
        field_name, colon, _ = line.partition(b":")
        if not colon:
            raise UnsafeMessage("not sent: the header block holds a line that is no header field")
        found.append(field_name.decode("ascii", "replace"))
    if found != list(names):
        raise UnsafeMessage(
            f"not sent: the header fields are {', '.join(found)}, not the ones Berth wrote "
            f"({', '.join(names)})"
        )

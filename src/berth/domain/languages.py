"""Choosing a content language from an `Accept-Language` header, and the language a guest
reads their tickets and emails in."""

from __future__ import annotations

import re
from collections.abc import Sequence

# What a guest's language is chosen from when their contact names no `locales`: the request's
# Accept-Language, kept as at most this many well-formed tags of at most 35 characters each (a
# `locales` entry's limit).
MAX_ACCEPTED = 8
_TAG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,3}")
_HEADER_LIMIT = 1000


def parse_accept_language(header: str) -> list[str]:
    """Language tags in order of preference (q-values honoured, q=0 dropped, `*` ignored)."""
    weighted: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip()
        if not tag or tag == "*":
            continue
        quality = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                quality = float(params[2:])
            except ValueError:
                quality = 0.0
        if quality > 0:
            weighted.append((-quality, position, tag))
    return [tag for _, _, tag in sorted(weighted)]


def choose_language(header: str | None, available: list[str]) -> str | None:
    """The best available tag for the header: an exact match first, then the same primary
    language (`de` or `de-AT` picks `de-DE`). None when nothing fits or no header was sent."""
    if not header or not available:
        return None
    lowered = {tag.lower(): tag for tag in available}
    for wanted in parse_accept_language(header):
        exact = lowered.get(wanted.lower())
        if exact:
            return exact
        primary = wanted.split("-")[0].lower()
        for tag in available:
            if tag.split("-")[0].lower() == primary:
                return tag
    return None


def accepted_locales(header: str | None) -> tuple[str, ...]:
    """The language tags of an `Accept-Language` header, best first, as a contact's locales:
    only tags shaped like BCP 47 ones (`de`, `de-AT`, `zh-Hant-TW`; not `*` nor text), each once,
    at most MAX_ACCEPTED of them."""
    if not header:
        return ()
    tags = [tag for tag in parse_accept_language(header[:_HEADER_LIMIT]) if _TAG.fullmatch(tag)]
    return tuple(dict.fromkeys(tags))[:MAX_ACCEPTED]


def reading_language(
    locales: Sequence[str], content: Sequence[str], texts: Sequence[str], fallback: str
) -> str:
    """The language a guest reads: the first of their `locales`, in their order, that the
    `content` or Berth's own `texts` are written in (the content's tag when both: `de-AT` and
    `de` read `de-DE` content, `en` reads `en-GB` content and its dates; Berth's own when only
    its labels, dates and money are, the content then falling back field by field), else
    `fallback` (the product's language). A guest who reads German first and English second
    reads German labels on an English-only product."""
    for locale in locales:
        found = choose_language(locale, list(content)) or choose_language(locale, list(texts))
        if found:
            return found
    return fallback

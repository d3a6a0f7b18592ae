"""Choosing a content language from an `Accept-Language` header."""

from __future__ import annotations


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

"""What a changed field of a catalogue item was and is, in a few words: `prices EUR 25.00 -> 27.00`,
`EUR includedTaxes 1 retail 4.17 -> unset` (a price's amounts and its taxes' read as money),
`schedules 1 startTimes 10:00, 14:00 -> 10:00, 14:00, 17:00`. The item's documents are the
catalogue file's (camelCase keys, amounts in minor units)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

# A value longer than this is cut: a line says what changed, the YAML diff says it all.
SHOWN_LENGTH = 60
# Changes told per field; the rest are counted.
SHOWN_CHANGES = 4
_PRICE_LISTS = ("prices", "bookingPrices")
_AMOUNTS = ("retail", "original", "net")


def value_changes(key: str, before: Any, after: Any) -> list[str]:
    """The changes of the field `key` from `before` to `after` (None: not in the document)."""
    if key in _PRICE_LISTS and _prices(before) and _prices(after):
        changes = _price_changes(before or [], after or [])
    else:
        changes = list(_changes(key, before, after))
    if len(changes) > SHOWN_CHANGES:
        changes = [*changes[: SHOWN_CHANGES - 1], f"{key}: {len(changes) - SHOWN_CHANGES + 1} more changes"]
    return changes


def _prices(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(isinstance(p, dict) for p in value))


def _changes(path: str, before: Any, after: Any, price: dict[str, Any] | None = None) -> list[str]:
    """What changed under `path`; `price`: the price the values belong to, whose amounts (its
    own and its taxes') read as money in its precision."""
    if isinstance(before, dict) and isinstance(after, dict):
        price = next((p for p in (after, before) if "currency" in p), price)
        return [
            change
            for key in {**before, **after}
            if before.get(key) != after.get(key)
            for change in _changes(f"{path} {key}", before.get(key), after.get(key), price)
        ]
    items = (list, type(None))
    if (
        isinstance(before, items)
        and isinstance(after, items)
        and any(isinstance(v, dict) for v in (before or []) + (after or []))
        and len(before or []) == len(after or [])
    ):
        return [
            change
            for index, (old, new) in enumerate(zip(before or [], after or [], strict=True))
            if old != new
            for change in _changes(f"{path} {index + 1}", old, new, price)
        ]
    if price is not None and path.rsplit(" ", 1)[-1] in _AMOUNTS:
        return [f"{path} {_money(before, price)} -> {_money(after, price)}"]
    return [f"{path} {_shown(before)} -> {_shown(after)}"]


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list) and not any(isinstance(v, dict | list) for v in value):
        text = ", ".join(map(str, value)) or "none"
    elif isinstance(value, dict | list):
        text = _flow(value)
    else:
        text = str(value)
    return text if len(text) <= SHOWN_LENGTH else text[: SHOWN_LENGTH - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


def _price_key(price: dict[str, Any]) -> tuple[Any, ...]:
    return price.get("currency"), price.get("from"), price.get("until")


def _price_name(price: dict[str, Any]) -> str:
    dates = ""
    if price.get("from") or price.get("until"):
        dates = f" ({price.get('from') or '…'} to {price.get('until') or '…'})"
    return f"{price.get('currency')}{dates}"


def _money(amount: Any, price: dict[str, Any]) -> str:
    precision = price.get("currencyPrecision", 2)
    if not isinstance(amount, int) or not isinstance(precision, int):
        return _shown(amount)
    return f"{Decimal(amount) / 10**precision:.{precision}f}"


def _price_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[str]:
    """Prices matched by currency and dates: `EUR 25.00 -> 27.00`, `EUR net 20.00 -> 21.00`."""
    old = {_price_key(p): p for p in before}
    new = {_price_key(p): p for p in after}
    changes: list[str] = []
    for key, price in new.items():
        was = old.get(key)
        name = _price_name(price)
        if was is None:
            changes.append(f"{name} {_money(price.get('retail'), price)} added")
            continue
        for field in {**was, **price}:
            if was.get(field) == price.get(field):
                continue
            label = "" if field == "retail" else f" {field}"
            if field in _AMOUNTS:
                changes.append(
                    f"{name}{label} {_money(was.get(field), was)} -> {_money(price.get(field), price)}"
                )
            else:
                changes.extend(_changes(f"{name}{label}", was.get(field), price.get(field), price))
    changes.extend(
        f"{_price_name(price)} {_money(price.get('retail'), price)} removed"
        for key, price in old.items()
        if key not in new
    )
    return changes

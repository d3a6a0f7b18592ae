"""The dashboard's charts as geometry: numbers in, rectangles, lines and labels out, for the
template to write as SVG (no script, no library). Pure: tested without I/O.

Bookings per day are bars stacked by reseller, with a legend; occupancy is one row of bars per
product, each day's bar as tall as the share of its places sold. Every bar carries a title (a
tooltip, and what a screen reader says), and each chart a title and a description."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Okabe-Ito colours: told apart with every common colour-vision deficiency.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
OTHERS = "#999999"


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    fill: str
    title: str


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    anchor: str = "middle"  # SVG text-anchor


@dataclass(frozen=True)
class Rule:
    """A horizontal grid line (an axis or a tick)."""

    x1: float
    x2: float
    y: float


@dataclass(frozen=True)
class Key:
    """A legend entry: a swatch at (x, y) and its label beside it."""

    x: float
    y: float
    fill: str
    label: str


@dataclass(frozen=True)
class Chart:
    width: float
    height: float
    title: str
    description: str
    bars: tuple[Bar, ...]
    texts: tuple[Text, ...]
    rules: tuple[Rule, ...]
    keys: tuple[Key, ...] = ()


@dataclass(frozen=True)
class Series:
    """One reseller's counts, one per day."""

    label: str
    values: tuple[int, ...]


@dataclass(frozen=True)
class ShareRow:
    """One product's share of places sold per day (0 to 1), None where nothing operates or
    places have no limit."""

    label: str
    shares: tuple[float | None, ...]


def nice_ceiling(value: float) -> int:
    """The smallest 1, 2 or 5 times a power of ten at least `value` (at least 1): the top of an axis."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if step * power >= value:
            return int(step * power)
    raise AssertionError("unreachable")


def ticks(top: int) -> list[int]:
    """0, then up to five evenly spaced whole values up to `top`."""
    step = max(1, nice_ceiling(top / 5))
    return list(range(0, top + 1, step))


def keep_series(series: Sequence[Series], most: int = len(PALETTE)) -> list[tuple[Series, str]]:
    """The series with a colour each, largest first: past `most`, the smallest are summed as
    'Other resellers' in grey."""
    ordered = sorted((s for s in series if sum(s.values)), key=lambda s: (-sum(s.values), s.label))
    if len(ordered) <= most:
        return [(s, PALETTE[i]) for i, s in enumerate(ordered)]
    kept = ordered[: most - 1]
    rest = ordered[most - 1 :]
    other = Series(
        "Other resellers", tuple(sum(values) for values in zip(*(s.values for s in rest), strict=True))
    )
    return [*((s, PALETTE[i]) for i, s in enumerate(kept)), (other, OTHERS)]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def stacked_bars(
    days: Sequence[str],
    series: Sequence[Series],
    *,
    title: str,
    width: float = 760,
    plot_height: float = 180,
    label_every: int = 5,
) -> Chart:
    """Bars per day stacked by series, a value axis with ticks, every `label_every`-th day
    labelled under its bar, and a legend under the chart."""
    left, right, top_margin, axis_gap = 36.0, 8.0, 12.0, 22.0
    coloured = keep_series(series)
    totals = [sum(s.values[i] for s, _ in coloured) for i in range(len(days))]
    top = nice_ceiling(max(totals, default=0))
    slot = (width - left - right) / max(1, len(days))
    bar_width = max(1.0, slot * 0.7)
    base = top_margin + plot_height
    bars: list[Bar] = []
    for i, day in enumerate(days):
        y = base
        x = left + i * slot + (slot - bar_width) / 2
        for item, fill in coloured:
            value = item.values[i]
            if not value:
                continue
            height = plot_height * value / top
            y -= height
            bars.append(
                Bar(x, y, bar_width, height, fill, f"{day}: {item.label}, {_plural(value, 'booking')}")
            )
    texts = [Text(left - 6, base - plot_height * t / top + 4, str(t), "end") for t in ticks(top)]
    texts += [
        Text(left + i * slot + slot / 2, base + 16, day)
        for i, day in enumerate(days)
        if i % label_every == 0 or i == len(days) - 1
    ]
    rules = [Rule(left, width - right, base - plot_height * t / top) for t in ticks(top)]
    keys: list[Key] = []
    x, y = left, base + axis_gap + 14
    for item, fill in coloured:
        label = f"{item.label} ({sum(item.values)})"
        span = 18 + 7 * len(label) + 16
        if x + span > width and x > left:
            x, y = left, y + 20
        keys.append(Key(x, y, fill, label))
        x += span
    total = sum(totals)
    if coloured:
        shares = ", ".join(f"{item.label} {sum(item.values)}" for item, _ in coloured)
        description = (
            f"{_plural(total, 'booking')} over {_plural(len(days), 'day')}: {shares}. Busiest day: "
            + (f"{days[totals.index(max(totals))]} with {max(totals)}.")
        )
    else:
        description = f"No booking was confirmed in these {_plural(len(days), 'day')}."
    height = y + (12 if keys else 0) + 8
    return Chart(width, height, title, description, tuple(bars), tuple(texts), tuple(rules), tuple(keys))


def share_rows(
    days: Sequence[str],
    rows: Sequence[ShareRow],
    *,
    title: str,
    width: float = 760,
    row_height: float = 44,
    label_width: float = 170,
    label_every: int = 1,
) -> Chart:
    """A row of bars per product, one per day, each as tall as its share (a full row is 100%);
    days without places for sale show as a short grey tick."""
    right, top_margin = 8.0, 8.0
    slot = (width - label_width - right) / max(1, len(days))
    bar_width = max(1.0, slot * 0.75)
    inner = row_height - 12
    bars: list[Bar] = []
    texts: list[Text] = []
    rules: list[Rule] = []
    for r, row in enumerate(rows):
        base = top_margin + (r + 1) * row_height - 6
        texts.append(Text(label_width - 8, base - inner / 2 + 4, row.label, "end"))
        rules.append(Rule(label_width, width - right, base))
        for i, share in enumerate(row.shares):
            x = label_width + i * slot + (slot - bar_width) / 2
            if share is None:
                bars.append(
                    Bar(x, base - 2, bar_width, 2, OTHERS, f"{row.label}, {days[i]}: nothing for sale")
                )
                continue
            clamped = min(1.0, max(0.0, share))
            height = max(1.0, inner * clamped)
            fill = PALETTE[5] if clamped >= 0.9 else PALETTE[0]
            bars.append(
                Bar(
                    x,
                    base - height,
                    bar_width,
                    height,
                    fill,
                    f"{row.label}, {days[i]}: {round(clamped * 100)}% sold",
                )
            )
    axis = top_margin + len(rows) * row_height + 10
    texts += [
        Text(label_width + i * slot + slot / 2, axis, day)
        for i, day in enumerate(days)
        if i % label_every == 0 or i == len(days) - 1
    ]
    known = [s for row in rows for s in row.shares if s is not None]
    if known:
        fullest = max(
            (
                (row.label, days[i], min(1.0, s))
                for row in rows
                for i, s in enumerate(row.shares)
                if s is not None
            ),
            key=lambda found: found[2],
        )
        description = (
            f"Share of places sold per day for {_plural(len(rows), 'product')} over {_plural(len(days), 'day')}; "
            f"fullest: {fullest[0]} on {fullest[1]}, {round(fullest[2] * 100)}%. "
            "Bars at 90% or more are orange."
        )
    else:
        description = f"Nothing is for sale with limited places in these {_plural(len(days), 'day')}."
    return Chart(width, axis + 8, title, description, tuple(bars), tuple(texts), tuple(rules))

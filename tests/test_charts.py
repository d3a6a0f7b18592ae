"""The dashboard charts' geometry, from numbers alone (no I/O): axes, stacking, the legend,
what each bar says, and the descriptions screen readers read."""

from __future__ import annotations

import pytest

from berth.http.admin.pages.charts import (
    OTHERS,
    PALETTE,
    Series,
    ShareRow,
    keep_series,
    nice_ceiling,
    share_rows,
    stacked_bars,
    ticks,
)

DAYS = ("1 Jun", "2 Jun", "3 Jun", "4 Jun")


@pytest.mark.parametrize(
    ("value", "top"), [(0, 1), (1, 1), (3, 5), (5, 5), (7, 10), (11, 20), (180, 200), (201, 500), (999, 1000)]
)
def test_axis_tops_are_round(value: float, top: int) -> None:
    assert nice_ceiling(value) == top


def test_ticks_reach_the_top_in_whole_steps() -> None:
    assert ticks(1) == [0, 1]
    assert ticks(5) == [0, 1, 2, 3, 4, 5]
    assert ticks(10) == [0, 2, 4, 6, 8, 10]
    assert ticks(200) == [0, 50, 100, 150, 200]


def test_bars_stack_per_day_in_proportion() -> None:
    chart = stacked_bars(
        DAYS,
        [Series("Reseller A", (2, 0, 1, 0)), Series("Reseller B", (3, 0, 0, 1))],
        title="Bookings",
        width=400,
        plot_height=100,
        label_every=2,
    )
    # B has more bookings, so it comes first in colour and at the bottom of each stack.
    first_day = [b for b in chart.bars if b.title.startswith("1 Jun")]
    assert [(b.title, b.fill) for b in first_day] == [
        ("1 Jun: Reseller B, 3 bookings", PALETTE[0]),
        ("1 Jun: Reseller A, 2 bookings", PALETTE[1]),
    ]
    bottom, upper = first_day
    assert bottom.height == pytest.approx(60) and upper.height == pytest.approx(40)  # of 5, the axis top
    assert bottom.y + bottom.height == pytest.approx(112)  # on the base line
    assert upper.y + upper.height == pytest.approx(bottom.y)  # stacked on it
    assert [b.title for b in chart.bars if b.title.startswith("3 Jun")] == ["3 Jun: Reseller A, 1 booking"]
    assert not [b for b in chart.bars if b.title.startswith("2 Jun")]  # an empty day draws nothing
    assert [t.text for t in chart.texts if t.anchor == "middle"] == [
        "1 Jun",
        "3 Jun",
        "4 Jun",
    ]  # every 2nd, and the last
    assert [t.text for t in chart.texts if t.anchor == "end"] == ["0", "1", "2", "3", "4", "5"]
    assert [(k.label, k.fill) for k in chart.keys] == [
        ("Reseller B (4)", PALETTE[0]),
        ("Reseller A (3)", PALETTE[1]),
    ]
    assert (
        chart.description == "7 bookings over 4 days: Reseller B 4, Reseller A 3. Busiest day: 1 Jun with 5."
    )
    assert all(b.x >= 0 and b.x + b.width <= chart.width for b in chart.bars)
    assert all(k.y < chart.height for k in chart.keys)


def test_the_legend_wraps_and_many_resellers_share_a_grey() -> None:
    many = [Series(f"Reseller number {n}", (n + 1,)) for n in range(10)]
    kept = keep_series(many)
    assert len(kept) == len(PALETTE)
    assert kept[0][0].label == "Reseller number 9" and kept[-1] == (
        Series("Other resellers", (1 + 2 + 3,)),
        OTHERS,
    )
    chart = stacked_bars(("1 Jun",), many, title="Bookings", width=400)
    assert len({k.y for k in chart.keys}) > 1  # wrapped onto several lines
    assert all(k.x + 18 + 7 * len(k.label) <= 400 for k in chart.keys)


def test_no_bookings_is_said_plainly() -> None:
    chart = stacked_bars(DAYS, [Series("Reseller A", (0, 0, 0, 0))], title="Bookings")
    assert chart.bars == () and chart.keys == ()
    assert chart.description == "No booking was confirmed in these 4 days."


def test_occupancy_rows_show_each_days_share() -> None:
    chart = share_rows(
        DAYS,
        [ShareRow("Harbour cruise", (0.5, 1.0, None, 0.0)), ShareRow("Kayak", (0.25, 0.95, 0.1, 1.3))],
        title="Places sold",
        width=500,
        row_height=50,
        label_width=100,
    )
    cruise = [b for b in chart.bars if b.title.startswith("Harbour cruise")]
    assert [b.title for b in cruise] == [
        "Harbour cruise, 1 Jun: 50% sold",
        "Harbour cruise, 2 Jun: 100% sold",
        "Harbour cruise, 3 Jun: nothing for sale",
        "Harbour cruise, 4 Jun: 0% sold",
    ]
    half, full, closed, empty = cruise
    assert full.height == pytest.approx(2 * half.height) and full.y + full.height == pytest.approx(
        half.y + half.height
    )
    assert closed.fill == OTHERS and empty.height == 1  # still visible
    assert full.fill == PALETTE[5] and half.fill == PALETTE[0]  # 90% or more stands out
    kayak = [b for b in chart.bars if b.title.startswith("Kayak")]
    assert kayak[3].title == "Kayak, 4 Jun: 100% sold" and kayak[3].height == pytest.approx(full.height)
    assert kayak[0].y > full.y + full.height  # the second row lies under the first
    assert [t.text for t in chart.texts if t.anchor == "end"] == ["Harbour cruise", "Kayak"]
    assert chart.description == (
        "Share of places sold per day for 2 products over 4 days; fullest: Harbour cruise on 2 Jun, 100%. "
        "Bars at 90% or more are orange."
    )


def test_occupancy_without_places_for_sale() -> None:
    chart = share_rows(DAYS, [ShareRow("Walk", (None, None, None, None))], title="Places sold")
    assert chart.description == "Nothing is for sale with limited places in these 4 days."

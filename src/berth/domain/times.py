"""Local and UTC time stamps, and wall-clock times on days that change daylight-saving time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from berth.domain.catalog import DurationUnit

_UNIT_LENGTH = {
    DurationUnit.minute: timedelta(minutes=1),
    DurationUnit.hour: timedelta(hours=1),
    DurationUnit.day: timedelta(days=1),
}


def _require_aware(dt: datetime) -> None:
    # A naive datetime would be read as the server's own local time: always a bug here.
    if dt.utcoffset() is None:
        raise ValueError(f"{dt!r} has no time zone")


def format_local(dt: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SS+HH:MM` in dt's own zone (`+00:00`, never `Z`; no fraction).

    Offsets are whole minutes in every zone since the early 20th century; older local mean
    times would show offset seconds.
    """
    _require_aware(dt)
    return dt.isoformat(timespec="seconds")


def format_utc(dt: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ`: the instant in UTC, without fractional seconds."""
    _require_aware(dt)
    return dt.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def format_utc_or_none(dt: datetime | None) -> str | None:
    """`format_utc`, and None for no instant (an optional field)."""
    return format_utc(dt) if dt is not None else None


def local_datetime(day: date, clock: str, zone: ZoneInfo) -> datetime:
    """The aware datetime at wall-clock `clock` ("HH:MM") on `day` in `zone`.

    A time that occurs twice (clocks go back) is the first occurrence; a time that does not
    occur (clocks go forward) moves forward by the gap, e.g. 01:30 becomes 02:30 on the day
    Europe/London springs forward. The round trip through UTC does both.
    """
    hour, minute = clock.split(":")
    wall = datetime(day.year, day.month, day.day, int(hour), int(minute), tzinfo=zone)
    return wall.astimezone(UTC).astimezone(zone)


def add_duration(amount: int, unit: DurationUnit) -> timedelta:
    """`amount` times `unit` as an elapsed time (a day is 24 hours, also across a DST change)."""
    return amount * _UNIT_LENGTH[unit]

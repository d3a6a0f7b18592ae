"""What a catalogue import changes: as JSON for the admin API, as lines for `berth catalog import`."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

from berth.capabilities.base import JSON
from berth.domain.catalog_changes import CatalogChanges, Change, Conflict, ContractNet, DepartureLoss

# Departures listed per option on a terminal; the admin API's dry run lists them all.
DEPARTURES_SHOWN = 20


def changes_json(changes: CatalogChanges) -> JSON:
    return {
        "supplierChanged": changes.supplier_changed,
        "changes": [
            {
                "change": item.change.value,
                "kind": item.kind,
                "productId": item.product_id,
                "optionId": item.option_id,
                "unitId": item.unit_id,
                "fields": list(item.fields),
                "values": list(item.values),
            }
            for item in changes.items
        ],
        "departuresUntil": changes.horizon_end.isoformat() if changes.horizon_end else None,
        "departures": [
            {
                "productId": loss.product_id,
                "optionId": loss.option_id,
                "availabilityId": loss.availability_id,
                "reason": loss.reason.value,
                "capacityBefore": loss.before,
                "capacityAfter": loss.after,
                "bookedPlaces": loss.booked,
            }
            for loss in changes.departures
        ],
        "conflicts": [
            {
                "productId": conflict.product_id,
                "optionId": conflict.option_id,
                "availabilityId": conflict.availability_id,
                "reason": conflict.reason,
                "bookings": [
                    {
                        "supplierReference": b.supplier_reference,
                        "resellerReference": b.reseller_reference,
                        "status": b.status.value,
                        "places": b.places,
                    }
                    for b in conflict.bookings
                ],
            }
            for conflict in changes.conflicts
        ],
        "netsAboveRetail": [_net_json(found) for found in changes.nets_above_retail],
    }


def _net_json(found: ContractNet) -> JSON:
    entry = found.net.entry
    return {
        "connectionId": found.connection_id,
        "connectionName": found.connection_name,
        "entry": f"rate.netPrices[{found.net.index}]",
        "productId": entry.product,
        "optionId": found.net.option,
        "unitId": entry.unit,
        "currency": entry.currency,
        "currencyPrecision": found.net.precision,
        "net": entry.net,
        "retail": found.net.retail,
        "message": str(found),
    }


_MARKS = {Change.ADDED: "+", Change.CHANGED: "~", Change.REMOVED: "-"}


def changes_lines(changes: CatalogChanges) -> list[str]:
    """The changes for a terminal: items, departures losing places, bookings in the way."""
    lines: list[str] = []
    if changes.supplier_changed:
        lines.append("Supplier: changed")
    if changes.items:
        lines.append("Products, options and units:")
        for item in changes.items:
            fields = f" ({', '.join(item.fields)})" if item.fields else ""
            fields += f": {'; '.join(item.values)}" if item.values else ""
            lines.append(f"  {_MARKS[item.change]} {item.change.value} {item.kind} {item.name}{fields}")
    if not changes.changed:
        lines.append("No changes: the file is the catalogue as stored.")
    if changes.horizon_end is None:
        lines.append("No live bookings on upcoming departures: departures were not compared.")
    elif changes.departures:
        lines.append(
            f"Departures losing places, today to {changes.horizon_end.isoformat()} "
            "(the last date with live bookings):"
        )
        lines.extend(_departure_lines(changes.departures))
    else:
        lines.append(
            f"No departure loses places up to {changes.horizon_end.isoformat()} (the last date with live bookings)."
        )
    if changes.conflicts:
        lines.append(f"Live bookings in the way ({changes.affected_bookings}):")
        lines.extend(conflict_lines(changes.conflicts))
    if changes.nets_above_retail:
        lines.append(
            f"Contract nets this puts above the retail they apply to ({len(changes.nets_above_retail)}): "
            "saved only if you choose to sell them at the retail (no commission), or after their "
            "contracts change:"
        )
        lines.extend(net_lines(changes.nets_above_retail))
    return lines


def net_lines(nets: Iterable[ContractNet]) -> Iterable[str]:
    return (f"  {found}" for found in nets)


def _departure_lines(departures: Iterable[DepartureLoss]) -> Iterable[str]:
    for (product_id, option_id), group in groupby(departures, key=lambda d: (d.product_id, d.option_id)):
        losses = list(group)
        for loss in losses[:DEPARTURES_SHOWN]:
            before = "no limit" if loss.before is None else str(loss.before)
            booked = f"; {loss.booked} booked" if loss.booked else ""
            yield (
                f"  {product_id}/{option_id} {loss.availability_id}: {before} -> {loss.after} places "
                f"({loss.reason.value}){booked}"
            )
        if len(losses) > DEPARTURES_SHOWN:
            rest = losses[DEPARTURES_SHOWN:]
            yield (
                f"  {product_id}/{option_id}: {len(rest)} more, {rest[0].availability_id[:10]} to "
                f"{rest[-1].availability_id[:10]} (the admin API's dry run lists every one)"
            )


def conflict_lines(conflicts: Iterable[Conflict]) -> Iterable[str]:
    for conflict in conflicts:
        departure = conflict.availability_id or "(no date)"
        yield f"  {conflict.product_id}/{conflict.option_id} {departure}: {conflict.reason}"
        for b in conflict.bookings:
            reseller = f", reseller reference {b.reseller_reference}" if b.reseller_reference else ""
            yield f"    {b.supplier_reference} ({b.status.value}, {b.places} places{reseller})"

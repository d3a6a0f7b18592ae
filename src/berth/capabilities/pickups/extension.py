"""The pickup a booking asks for: read from pickupRequested, pickupPointId, pickupHotel and
pickupHotelRoom at reserve, update and confirm, checked against the option booked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from berth.capabilities.ids import PICKUPS
from berth.domain.bookings import BookingStatus
from berth.domain.catalog import Option, Product
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.services.bookings.extensions import BookingExtension, ExtensionStep, Stage

# The request fields read (OCTO names), and the attributes of `Pickup` they set.
REQUEST_FIELDS = {
    "pickupRequested": "requested",
    "pickupPointId": "point_id",
    "pickupHotel": "hotel",
    "pickupHotelRoom": "hotel_room",
}


@dataclass(frozen=True)
class Pickup:
    requested: bool = False
    point_id: str | None = None
    hotel: str | None = None
    hotel_room: str | None = None

    @classmethod
    def from_document(cls, document: Any) -> Pickup:
        if not document:
            return cls()
        return cls(
            requested=bool(document.get("requested")),
            point_id=document.get("pointId"),
            hotel=document.get("hotel"),
            hotel_room=document.get("hotelRoom"),
        )

    def to_document(self) -> dict[str, Any] | None:
        if self == Pickup():
            return None
        return {
            "requested": self.requested,
            "pointId": self.point_id,
            "hotel": self.hotel,
            "hotelRoom": self.hotel_room,
        }


def merge(kept: Pickup, sent: Any) -> Pickup:
    """The pickup after a request: what it sends replaces what was kept (null clears); a
    pickup point or hotel asks for pickup; `pickupRequested: false` drops the pickup."""
    if not sent:
        return kept
    values = {key: getattr(kept, name) for key, name in REQUEST_FIELDS.items()}
    for key in REQUEST_FIELDS:
        if key in sent:
            values[key] = sent[key]
    requested = sent.get("pickupRequested")
    chosen = [k for k in ("pickupPointId", "pickupHotel", "pickupHotelRoom") if sent.get(k) is not None]
    if requested is False:
        if chosen:
            raise BadRequest(
                f"pickupRequested is false but {', '.join(chosen)} was sent: leave it out, or request pickup"
            )
        return Pickup()
    if requested is None and chosen:
        values["pickupRequested"] = True
    return Pickup(
        requested=bool(values["pickupRequested"]),
        point_id=values["pickupPointId"],
        hotel=values["pickupHotel"],
        hotel_room=values["pickupHotelRoom"],
    )


def check(product: Product, option: Option, pickup: Pickup, *, complete: bool) -> None:
    """BAD_REQUEST for a pickup the option cannot give; with `complete` (a booking being
    confirmed, or already confirmed) UNPROCESSABLE_ENTITY for a pickup required or requested
    but not chosen."""
    if pickup != Pickup() and not option.pickup_points:
        raise BadRequest(
            f"Option {option.id!r} of product {product.id!r} offers no pickup: "
            "pickupRequested, pickupPointId and pickupHotel are not accepted"
        )
    if pickup.point_id is not None and option.pickup_point(pickup.point_id) is None:
        choices = ", ".join(p.id for p in option.pickup_points)
        raise BadRequest(
            f"The pickup point {pickup.point_id!r} is not a pickup point of option {option.id!r}: "
            f"choose one of {choices}",
            pickupPointId=pickup.point_id,
        )
    if pickup.hotel_room is not None and pickup.hotel is None:
        raise BadRequest("pickupHotelRoom needs a pickupHotel: the room is in the pickup hotel")
    if not complete:
        return
    if option.pickup_required and not pickup.requested:
        raise UnprocessableEntity(
            f"Option {option.id!r} requires pickup: request octo/pickups and send pickupRequested "
            "with a pickupPointId (or a pickupHotel)"
        )
    if pickup.requested and pickup.point_id is None and pickup.hotel is None:
        raise UnprocessableEntity(
            "Pickup was requested without a place: send a pickupPointId or a pickupHotel"
        )


class PickupExtension(BookingExtension):
    key = PICKUPS

    def apply(self, step: ExtensionStep) -> dict[str, Any] | None:
        if step.stage is Stage.RESERVE and step.sent is None and step.option.pickup_required:
            raise UnprocessableEntity(
                f"Option {step.option.id!r} of product {step.product.id!r} requires pickup, which "
                "only octo/pickups can choose: request the octo/pickups capability (Octo-Capabilities), "
                "else the booking could never be confirmed"
            )
        pickup = merge(Pickup.from_document(step.kept(PICKUPS)), step.sent)
        complete = step.stage is Stage.CONFIRM or step.booking.status is not BookingStatus.ON_HOLD
        check(step.product, step.option, pickup, complete=complete)
        return pickup.to_document()

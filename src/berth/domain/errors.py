"""OCTO errors raised by domain and service code; the HTTP layer renders them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class OctoError(Exception):
    """An OCTO error: machine `code`, human `message` and echoed fields such as `productId`."""

    code = "INTERNAL_SERVER_ERROR"

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "errorMessage": self.message, **self.extra}

    def adding(self, sentence: str) -> OctoError:
        """This error, its message followed by `sentence`."""
        self.message = f"{self.message}. {sentence}"
        self.args = (self.message,)
        return self


class BadRequest(OctoError):
    code = "BAD_REQUEST"


class Unauthorized(OctoError):
    code = "UNAUTHORIZED"


class Forbidden(OctoError):
    code = "FORBIDDEN"


class UnprocessableEntity(OctoError):
    code = "UNPROCESSABLE_ENTITY"


class TooManyRequests(OctoError):
    """OCTO clients retry after `retryAfter` seconds when they see this code."""

    code = "TOO_MANY_REQUESTS"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message, retryAfter=retry_after)
        self.retry_after = retry_after


class NotFound(OctoError):
    code = "NOT_FOUND"


class Conflict(OctoError):
    """The request contradicts one made before under the same key (answered 409)."""

    code = "CONFLICT"


class InvalidProductId(OctoError):
    code = "INVALID_PRODUCT_ID"

    def __init__(self, product_id: Any, unsold: str | None = None) -> None:
        if product_id is None:
            message = "productId is required: the id of one of the supplier's products (GET /products)"
        elif unsold is not None:
            message = f"The product {product_id!r} is not on sale: {unsold}"
        else:
            message = f"The product {product_id!r} does not exist"
        super().__init__(message, productId=product_id)


class InvalidOptionId(OctoError):
    code = "INVALID_OPTION_ID"

    def __init__(self, option_id: Any, product_id: str, options: Sequence[str] = ()) -> None:
        listed = f" ({', '.join(options)})" if options else ""
        message = (
            f"optionId is required: the id of one of the options of product {product_id!r}{listed}"
            if option_id is None
            else f"The option {option_id!r} is not an option of product {product_id!r}{listed}"
        )
        super().__init__(message, optionId=option_id)


class InvalidUnitId(OctoError):
    code = "INVALID_UNIT_ID"

    def __init__(self, unit_id: Any, option_id: str) -> None:
        super().__init__(f"The unit {unit_id!r} is not a unit of option {option_id!r}", unitId=unit_id)


class InvalidAvailabilityId(OctoError):
    code = "INVALID_AVAILABILITY_ID"

    def __init__(self, availability_id: Any, message: str | None = None) -> None:
        super().__init__(
            message or f"The availability {availability_id!r} does not exist for this option",
            availabilityId=availability_id,
        )


class InvalidBookingUuid(OctoError):
    code = "INVALID_BOOKING_UUID"

    def __init__(self, uuid: Any, message: str | None = None) -> None:
        super().__init__(message or f"The booking {uuid!r} does not exist", uuid=uuid)


class InvalidOrderId(OctoError):
    code = "INVALID_ORDER_ID"

    def __init__(self, order_id: Any) -> None:
        super().__init__(f"The order {order_id!r} does not exist", id=order_id, orderId=order_id)


class InvalidRentalDurationId(OctoError):
    """octo/rentals: a `rentalDurationId` that is not one of the option's rental durations (or
    none, where the option has several to choose from)."""

    code = "INVALID_RENTAL_DURATION_ID"

    def __init__(self, duration_id: Any, message: str | None = None) -> None:
        super().__init__(
            message or f"The rental duration {duration_id!r} is not a rental duration of this option",
            rentalDurationId=duration_id,
        )

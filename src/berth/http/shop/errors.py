"""Failures of the shop's pages answered as pages in the guest's language, not as the OCTO JSON
errors the app renders elsewhere: a closed shop, an unknown product or link, an expired form,
an address that is not one, and anything unexpected (logged, with nothing of it shown)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import structlog
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.responses import Response

from berth.domain.errors import NotFound, OctoError
from berth.http.shop.rendering import page
from berth.http.shop.session import CsrfRejected, guest
from berth.services.shop import ShopClosed
from berth.store.faults import log_failure
from berth.translations import N_

log = structlog.get_logger("berth.shop")

MISSING = (
    "NOT_FOUND",
    "INVALID_PRODUCT_ID",
    "INVALID_OPTION_ID",
    "INVALID_AVAILABILITY_ID",
    "INVALID_BOOKING_UUID",
)
CLOSED = (N_("The shop is closed"), N_("Nothing can be booked here at the moment."))
NOT_FOUND = (
    N_("Page not found"),
    N_("There is nothing at this address. It may have been mistyped, or it is no longer on sale."),
)
EXPIRED = (
    N_("This page has expired"),
    N_(
        "The form was sent from a page that is too old, or from another site. Nothing was changed: go back, reload the page and try again."
    ),
)
NOT_VALID = (
    N_("This address is not valid"),
    N_("Part of the address is not in the form expected. Go back and try again."),
)
FAILED = (
    N_("Something went wrong"),
    N_("Your request could not be completed, and nothing was changed. Please try again in a moment."),
)


async def error_page(request: Request, status_code: int, heading: str, message: str) -> Response:
    found = await guest(request)
    return page(request, found, "error.html", status_code=status_code, heading=heading, message=message)


class ShopRoute(APIRoute):
    """Routes whose failures are pages, including those raised by their dependencies."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except ShopClosed:
                return await error_page(request, 404, *CLOSED)
            except CsrfRejected:
                return await error_page(request, 403, *EXPIRED)
            except OctoError as exc:
                if exc.code in MISSING or isinstance(exc, NotFound):
                    return await error_page(request, 404, *NOT_FOUND)
                log.warning(
                    "shop request refused", path=request.url.path, error=exc.code, message=exc.message
                )
                return await error_page(request, 400, *FAILED)
            except RequestValidationError:
                return await error_page(request, 400, *NOT_VALID)
            except Exception as exc:
                log_failure(log, "shop page failed", exc, path=request.url.path)
                return await error_page(request, 500, *FAILED)

        return answer

"""Failures of the back office's pages answered as pages, not as the OCTO JSON errors the app
renders everywhere else: sign-in redirects, the disabled notice, expired forms, unknown ids."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.responses import Response

from berth.domain.errors import Forbidden, NotFound, OctoError
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import (
    BackOfficeDisabled,
    CsrfRejected,
    PasswordChangeRequired,
    SignInRequired,
    current_staff,
)
from berth.http.errors import validation_message

# Unknown ids in a page's address: the page does not exist.
MISSING = ("NOT_FOUND", "INVALID_PRODUCT_ID", "INVALID_OPTION_ID", "INVALID_AVAILABILITY_ID")


def disabled_page(request: Request) -> Response:
    return page(request, "disabled.html", None, status_code=403)


async def _error_page(request: Request, status_code: int, heading: str, message: str) -> Response:
    staff = await current_staff(request)
    return page(request, "error.html", staff, status_code=status_code, heading=heading, message=message)


class PageRoute(APIRoute):
    """Routes whose errors are pages, including those raised by their dependencies."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                try:
                    return await handler(request)
                except SignInRequired as exc:
                    return redirect("/admin/sign-in?next=" + quote(exc.next_path, safe="/"))
                except PasswordChangeRequired:
                    return redirect("/admin/password")
                except Forbidden as exc:
                    return await _error_page(request, 403, "Not allowed for your role", exc.message + ".")
                except CsrfRejected:
                    return await _error_page(
                        request,
                        403,
                        "This form has expired",
                        "The form was sent without the security token of your current session (it was "
                        "opened before you last signed in, or on another site). Nothing was changed: go "
                        "back, reload the page and try again.",
                    )
                except OctoError as exc:
                    missing = exc.code in MISSING or isinstance(exc, NotFound)
                    heading = "Not found" if missing else "That did not work"
                    return await _error_page(request, 404 if missing else 400, heading, exc.message)
                except RequestValidationError as exc:
                    message = validation_message(list(exc.errors()))
                    return await _error_page(request, 400, "That address is not valid", message)
            except BackOfficeDisabled:
                return disabled_page(request)

        return answer

"""Signing in with the admin token, and out."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import Response

from berth.http.admin.pages.errors import PageRoute, disabled_page
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import (
    COOKIE_PATH,
    Session,
    Staff,
    csrf_for,
    current_staff,
    end_session,
    new_session,
    read_session,
    secure_cookies,
    set_session,
    signing_key,
    staff_form,
)
from berth.http.context import services

router = APIRouter(route_class=PageRoute)


def _safe_next(path: str) -> str:
    """Only a back office page: never another site (`//evil.example`) after signing in."""
    inside = path == COOKIE_PATH or path.startswith(COOKIE_PATH + "/")
    return path if inside and "\\" not in path else COOKIE_PATH


def _form(
    request: Request, key: bytes, session: Session, next_path: str, *, error: str | None, status_code: int
) -> Response:
    response = page(
        request,
        "sign_in.html",
        None,
        status_code=status_code,
        csrf=csrf_for(key, session),
        next_path=next_path,
        error=error,
        signed_out="signed_out" in request.query_params,
    )
    set_session(response, key, session, secure=secure_cookies(request))
    return response


@router.get("/sign-in")
async def sign_in_form(request: Request, next: str = COOKIE_PATH) -> Response:
    svc = services(request)
    key = signing_key(svc.settings)
    if key is None:
        return disabled_page(request)
    if await current_staff(request) is not None:
        return redirect(_safe_next(next))
    now = svc.clock()
    session = read_session(request, key, now) or new_session(now, signed_in=False)
    return _form(request, key, session, _safe_next(next), error=None, status_code=200)


@router.post("/sign-in")
async def sign_in(
    request: Request,
    token: str = Form(default=""),
    csrf_token: str = Form(default=""),
    next: str = Form(default=COOKIE_PATH),
) -> Response:
    svc = services(request)
    key = signing_key(svc.settings)
    admin_token = svc.settings.admin_token
    if key is None or admin_token is None:
        return disabled_page(request)
    now = svc.clock()
    next_path = _safe_next(next)
    session = read_session(request, key, now)
    if session is None or not hmac.compare_digest(csrf_token.encode(), csrf_for(key, session).encode()):
        error = "The sign-in form had expired. Nothing was sent; enter the token again."
        return _form(request, key, new_session(now, signed_in=False), next_path, error=error, status_code=403)
    if not hmac.compare_digest(token.strip().encode(), admin_token.get_secret_value().encode()):
        error = "That is not the admin token. It is the value of BERTH_ADMIN_TOKEN on the server."
        return _form(request, key, session, next_path, error=error, status_code=401)
    response = redirect(next_path)
    # A fresh nonce, so a session id planted before sign-in is worth nothing after it.
    set_session(response, key, new_session(now, signed_in=True), secure=secure_cookies(request))
    return response


@router.post("/sign-out")
async def sign_out(staff: Staff = Depends(staff_form)) -> Response:
    response = redirect("/admin/sign-in?signed_out")
    end_session(response, secure=staff.secure)
    return response

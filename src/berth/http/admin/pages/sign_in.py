"""Signing in (a member of staff by email and password, or the bootstrap admin with the admin
token), choosing a new password after a one-time one, and signing out."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import Response

from berth.domain.errors import BadRequest, TooManyRequests
from berth.domain.staff import MIN_PASSWORD_LENGTH, StaffMember
from berth.http.admin.pages.errors import PageRoute, disabled_page
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import (
    COOKIE_PATH,
    CsrfRejected,
    Notice,
    Session,
    Staff,
    csrf_for,
    current_staff,
    end_session,
    new_session,
    read_device,
    read_session,
    secure_cookies,
    set_device,
    set_session,
    signed_in,
    signing_key,
)
from berth.http.client_address import client_of
from berth.http.context import services
from berth.services.guessing import ADMIN_TOKEN_ACCOUNT

router = APIRouter(route_class=PageRoute)


def _safe_next(path: str) -> str:
    """Only a back office page: never another site (`//evil.example`) after signing in."""
    inside = path == COOKIE_PATH or path.startswith(COOKIE_PATH + "/")
    return path if inside and "\\" not in path else COOKIE_PATH


def _form(
    request: Request,
    key: bytes,
    session: Session,
    next_path: str,
    *,
    error: str | None,
    status_code: int,
    email: str = "",
) -> Response:
    response = page(
        request,
        "sign_in.html",
        None,
        status_code=status_code,
        csrf=csrf_for(key, session),
        next_path=next_path,
        error=error,
        email=email,
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
    email: str = Form(default="", max_length=254),
    password: str = Form(default="", max_length=1000),
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
        error = "The sign-in form had expired. Nothing was sent; sign in again."
        return _form(
            request,
            key,
            new_session(now, signed_in=False),
            next_path,
            error=error,
            status_code=403,
            email=email,
        )
    address = client_of(request.scope, svc.settings)
    account = svc.guessing.account(email if email.strip() else ADMIN_TOKEN_ACCOUNT)
    device = read_device(request, key, now)
    if device is not None and device.account == account.name:
        # A browser that signed in to this account before: counted on its own, so that a guesser
        # elsewhere (or behind the same address) does not lock its owner out.
        own = svc.guessing.device(device.nonce)
        guessing = [own]
    else:
        own = account
        guessing = [svc.guessing.address(address), account]
    try:
        kept = await svc.guessing.check(guessing)
    except TooManyRequests as refused:
        response = _form(
            request, key, session, next_path, error=refused.message + ".", status_code=429, email=email
        )
        response.headers["Retry-After"] = str(refused.retry_after)
        return response
    member: StaffMember | None = None
    if email.strip():
        member = await svc.staff.sign_in(email, password)
        if member is None:
            await svc.guessing.failed(guessing, address)
            error = "That email and password do not match an active staff account."
            return _form(request, key, session, next_path, error=error, status_code=401, email=email)
    elif not hmac.compare_digest(password.strip().encode(), admin_token.get_secret_value().encode()):
        await svc.guessing.failed(guessing, address)
        error = (
            "Enter your email and password. Without an email, the password must be the admin token: "
            "the value of BERTH_ADMIN_TOKEN on the server."
        )
        return _form(request, key, session, next_path, error=error, status_code=401)
    if own.key in kept:
        await svc.guessing.succeeded(own)
    response = redirect("/admin/password" if member and member.must_change_password else next_path)
    # A fresh nonce, so a session id planted before sign-in is worth nothing after it.
    fresh = new_session(now, signed_in=True, member=member)
    set_session(response, key, fresh, secure=secure_cookies(request))
    set_device(response, key, account.name, now, secure=secure_cookies(request))
    return response


@router.get("/password")
async def password_form(request: Request, me: Staff = Depends(signed_in)) -> Response:
    return page(request, "password.html", me, minimum=MIN_PASSWORD_LENGTH, error=None)


@router.post("/password")
async def change_password(
    request: Request,
    current: str = Form(default="", max_length=1000),
    new: str = Form(default="", max_length=1000),
    repeat: str = Form(default="", max_length=1000),
    csrf_token: str = Form(default=""),
    me: Staff = Depends(signed_in),
) -> Response:
    if not hmac.compare_digest(csrf_token.encode(), me.csrf.encode()):
        raise CsrfRejected
    if me.member is None:
        raise BadRequest("The admin token has no password to change: change BERTH_ADMIN_TOKEN on the server")
    error = None
    if new != repeat:
        error = "The two new passwords differ; nothing changed."
    else:
        try:
            changed = await me.services.staff.change_password(me.member, current, new)
        except BadRequest as exc:
            error = exc.message.rstrip(".") + "."
    if error is not None:
        return page(request, "password.html", me, minimum=MIN_PASSWORD_LENGTH, error=error, status_code=400)
    # This session goes on under the new generation; every other one of the member has ended.
    response = redirect(COOKIE_PATH, me, Notice("success", "Your new password is set."))
    fresh = new_session(me.services.clock(), signed_in=True, member=changed)
    set_session(response, me.key, fresh, secure=me.secure)
    return response


@router.post("/sign-out")
async def sign_out(csrf_token: str = Form(default=""), me: Staff = Depends(signed_in)) -> Response:
    """Also for a member who has not chosen their password yet."""
    if not hmac.compare_digest(csrf_token.encode(), me.csrf.encode()):
        raise CsrfRejected
    response = redirect("/admin/sign-in?signed_out")
    end_session(response, secure=me.secure)
    # The gate scanner's offline copy of departures (names, tickets) goes with the session.
    response.headers["Clear-Site-Data"] = '"cache", "storage"'
    return response

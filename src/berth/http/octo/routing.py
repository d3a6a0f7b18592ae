"""One declaration per fast OCTO route: its method, path, body model, answer function and
dependencies. FastAPI's route (the slow road, the OpenAPI document) and the direct dispatch of
`berth.http.hot_routes` are both generated from it, so neither can drift from the other.

A route's answer takes a `Call`: the request context (with the connection's mapped rows when
`mappings` is set), the services, the validated body and the path parameters. Routes are
declared beside their resource (`berth.http.octo.catalog`, `.availability`, `.bookings`) and
listed in `berth.http.octo.table`; a capability's routes are declared the same way in its HTTP
module and listed there too.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Depends, Header, Request
from pydantic import BaseModel
from starlette.responses import Response
from starlette.types import Scope

from berth.container import Services
from berth.http.context import OctoRequest, current_services, octo_request, octo_request_with_mappings

_PARAMETER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Call:
    """What an answer needs: the request context, the services, the validated body, the path
    parameters by name and the ASGI scope (for headers)."""

    octo: OctoRequest
    svc: Services
    body: Any
    params: dict[str, str]
    scope: Scope


@dataclass(frozen=True)
class OctoRoute:
    """`path` is relative to `/octo`; `{name}` matches one non-empty segment, as in Starlette.
    `headers` are request headers the answer reads from the scope, declared for the docs."""

    method: str
    path: str
    name: str
    summary: str
    response_model: Any
    answer: Callable[[Call], Awaitable[Response]]
    body: type[BaseModel] | None = None
    mappings: bool = False  # the View carries the connection's mapped rows (vendor/mappings)
    headers: tuple[str, ...] = ()
    parameters: tuple[str, ...] = field(init=False)
    pattern: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", tuple(_PARAMETER.findall(self.path)))
        pieces = _PARAMETER.split(self.path)  # literal, name, literal, name, ..., literal
        regex = "".join(
            f"(?P<{piece}>[^/]+)" if index % 2 else re.escape(piece) for index, piece in enumerate(pieces)
        )
        object.__setattr__(self, "pattern", re.compile(f"/octo{regex}"))

    def endpoint(self) -> Callable[..., Awaitable[Response]]:
        """The FastAPI endpoint: the same answer, with the parameters FastAPI resolves."""

        async def endpoint(**values: Any) -> Response:
            request: Request = values["request"]
            params = {name: values[name] for name in self.parameters}
            return await self.answer(
                Call(values["octo"], values["svc"], values.get("body"), params, request.scope)
            )

        keyword = inspect.Parameter.KEYWORD_ONLY
        signature = [inspect.Parameter("request", keyword, annotation=Request)]
        signature += [inspect.Parameter(name, keyword, annotation=str) for name in self.parameters]
        if self.body is not None:
            signature.append(inspect.Parameter("body", keyword, annotation=self.body))
        signature += [
            inspect.Parameter(
                _python_name(name), keyword, annotation=str | None, default=Header(default=None, alias=name)
            )
            for name in self.headers
        ]
        context = octo_request_with_mappings if self.mappings else octo_request
        signature += [
            inspect.Parameter("octo", keyword, annotation=OctoRequest, default=Depends(context)),
            inspect.Parameter("svc", keyword, annotation=Services, default=Depends(current_services)),
        ]
        endpoint.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
        endpoint.__name__ = self.name
        return endpoint


def _python_name(header: str) -> str:
    return header.lower().replace("-", "_")


def add_routes(router: APIRouter, routes: Sequence[OctoRoute]) -> None:
    """Declare `routes` on a FastAPI router (under its `/octo` prefix)."""
    for route in routes:
        router.add_api_route(
            route.path,
            route.endpoint(),
            methods=[route.method],
            response_model=route.response_model,
            summary=route.summary,
            name=route.name,
        )


class RouteTable:
    """Finds the route of a request: exact paths by lookup, templates by their patterns."""

    def __init__(self, routes: Sequence[OctoRoute]) -> None:
        self.routes = tuple(routes)
        self._exact = {(r.method, f"/octo{r.path}"): r for r in routes if not r.parameters}
        self._templates = [r for r in routes if r.parameters]

    def find(self, method: str, path: str) -> tuple[OctoRoute, dict[str, str]] | None:
        route = self._exact.get((method, path))
        if route is not None:
            return route, {}
        for route in self._templates:
            if route.method == method:
                found = route.pattern.fullmatch(path)
                if found is not None:
                    return route, found.groupdict()
        return None

"""The routes an app serves, routers included (FastAPI nests included routers)."""

from __future__ import annotations

from collections.abc import Iterator

from starlette.routing import BaseRoute


def routes_at(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, BaseRoute]]:
    """(full path, route) of every route."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from routes_at(included.routes, prefix + route.include_context.prefix)  # type: ignore[attr-defined]
        elif hasattr(route, "path"):
            yield prefix + route.path, route


def routes_of(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, set[str]]]:
    """(path, methods) of every route."""
    for path, route in routes_at(routes, prefix):
        if hasattr(route, "methods"):
            yield path, set(route.methods or ())

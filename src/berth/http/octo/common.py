"""Helpers shared by the OCTO routes: the response with OCTO headers, bearer docs."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from fastapi.security import HTTPBearer
from starlette.responses import Response

from berth.capabilities.registry import header_value
from berth.http.context import OctoRequest
from berth.views.encoding import json_bytes

bearer = HTTPBearer(auto_error=False, description="The API key of your connection")


def octo_headers(octo: OctoRequest) -> dict[str, str]:
    """The OCTO headers of an answer in this view; made once per catalogue snapshot and view,
    not to be changed by the caller."""
    key = ("octo headers", octo.view.shared_key)
    headers: dict[str, str] | None = octo.snapshot.memo.get(key)
    if headers is None:
        headers = {"Octo-Capabilities": header_value(octo.view.capabilities)}
        if octo.view.has("octo/content"):
            languages = octo.snapshot.languages
            headers["Content-Language"] = octo.view.language or (languages[0] if languages else "en")
            headers["Available-Languages"] = headers["Octo-Available-Languages"] = ", ".join(languages)
        octo.snapshot.memo[key] = headers
    return headers


def octo_response(octo: OctoRequest, data: Any = None, *, encoded: bytes | None = None) -> Response:
    content = encoded if encoded is not None else json_bytes(data)
    return Response(content=content, media_type="application/json", headers=octo_headers(octo))


def prepared_response(octo: OctoRequest, key: Hashable, encode: Callable[[], bytes]) -> Response:
    """The whole answer under `key` (status line, headers, body), made once per catalogue
    snapshot (one per version and contract, `services.contracts`) and view, then sent as it is
    to every request asking the same: a new catalogue or contract is a new snapshot, answered
    anew. Only for answers that depend on nothing else; never mutate what this returns."""
    memo_key = ("response", key, octo.view.shared_key)
    found: Response | None = octo.snapshot.memo.get(memo_key)
    if found is None:
        found = octo.snapshot.memo[memo_key] = octo_response(octo, encoded=encode())
    return found

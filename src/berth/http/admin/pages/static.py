"""The back office's own stylesheets and scripts, and the gate decoder's WebAssembly, served
from the package: pages load nothing from anywhere else. URLs carry a digest of the file, so
browsers may cache them for long."""

from __future__ import annotations

import hashlib
from importlib import resources

from fastapi import APIRouter, Request
from starlette.responses import Response

from berth.domain.errors import NotFound

MEDIA_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",  # the gate's decoder: browsers compile it only when so served
}


def _load() -> dict[str, tuple[bytes, str]]:
    folder = resources.files("berth.http.admin").joinpath("static")
    files = {}
    for entry in folder.iterdir():
        suffix = "." + entry.name.rpartition(".")[2]
        if entry.is_file() and suffix in MEDIA_TYPES:
            content = entry.read_bytes()
            files[entry.name] = (content, hashlib.sha256(content).hexdigest()[:16])
    return files


FILES = _load()
router = APIRouter()


def static_url(name: str) -> str:
    return f"/admin/static/{name}?v={FILES[name][1]}"


@router.get("/static/{name}")
async def static_file(name: str, request: Request) -> Response:
    found = FILES.get(name)
    if found is None:
        raise NotFound(f"There is no file {name!r} in the back office's static files")
    content, digest = found
    headers = {"ETag": f'"{digest}"', "Cache-Control": "public, max-age=604800"}
    if request.headers.get("if-none-match") == headers["ETag"]:
        return Response(status_code=304, headers=headers)
    return Response(content, media_type=MEDIA_TYPES["." + name.rpartition(".")[2]], headers=headers)

"""The back office's own stylesheets and scripts, and the gate decoder's WebAssembly, served
from the package (`berth.http.static_files`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from berth.http.static_files import PackageFiles

BACK_OFFICE = PackageFiles("berth.http.admin", "/admin/static", "the back office's static files")
FILES = BACK_OFFICE.files
router = APIRouter()


def static_url(name: str) -> str:
    return BACK_OFFICE.url(name)


@router.get("/static/{name}")
async def static_file(name: str, request: Request) -> Response:
    return BACK_OFFICE.answer(name, request)

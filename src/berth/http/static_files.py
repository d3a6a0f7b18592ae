"""Stylesheets and scripts a package of pages serves itself (the back office's, the shop's):
pages load nothing from anywhere else. URLs carry a digest of the file, so browsers may cache
them for long."""

from __future__ import annotations

import hashlib
from importlib import resources

from fastapi import Request
from starlette.responses import Response

from berth.domain.errors import NotFound

MEDIA_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".wasm": "application/wasm",  # the gate's decoder: browsers compile it only when so served
}


class PackageFiles:
    """The files of `package`'s `static` folder, served under `prefix`."""

    def __init__(self, package: str, prefix: str, what: str) -> None:
        self.prefix = prefix
        self._what = what
        self.files: dict[str, tuple[bytes, str]] = {}
        for entry in resources.files(package).joinpath("static").iterdir():
            suffix = "." + entry.name.rpartition(".")[2]
            if entry.is_file() and suffix in MEDIA_TYPES:
                content = entry.read_bytes()
                self.files[entry.name] = (content, hashlib.sha256(content).hexdigest()[:16])

    def url(self, name: str) -> str:
        return f"{self.prefix}/{name}?v={self.files[name][1]}"

    def answer(self, name: str, request: Request) -> Response:
        found = self.files.get(name)
        if found is None:
            raise NotFound(f"There is no file {name!r} in {self._what}")
        content, digest = found
        headers = {"ETag": f'"{digest}"', "Cache-Control": "public, max-age=604800"}
        if request.headers.get("if-none-match") == headers["ETag"]:
            return Response(status_code=304, headers=headers)
        return Response(content, media_type=MEDIA_TYPES["." + name.rpartition(".")[2]], headers=headers)

"""The API documentation: Swagger UI at /docs and ReDoc at /redoc, with their scripts and styles
served by Berth from the fastapi-offline package (a dependency, so installed with Berth). The
pages work with no internet, and their Content-Security-Policy lets them load nothing from
anywhere but Berth."""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

ASSETS = "/docs/assets"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def _policy(html: str) -> str:
    """Only Berth's own files, plus the page's inline script by its digest. Both viewers set
    inline styles, ReDoc searches in a worker it starts from a blob, and both draw icons as
    data: images."""
    digests = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'self'; script-src 'self' {digests}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    )


def _page(generated: HTMLResponse) -> HTMLResponse:
    html = bytes(generated.body).decode()
    headers = {
        "Content-Security-Policy": _policy(html),
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
    }
    return HTMLResponse(html, headers=headers)


def install_docs(app: FastAPI) -> None:
    """/docs, /redoc and their files, for an app created with `docs_url=None, redoc_url=None`."""
    app.mount(ASSETS, StaticFiles(packages=[("fastapi_offline", "static")]), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _page(
            get_swagger_ui_html(
                openapi_url=root + openapi_url,
                title=f"{app.title} - Swagger UI",
                swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
                swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
                oauth2_redirect_url=None,
                # Swagger UI would otherwise ask validator.swagger.io about a public document.
                swagger_ui_parameters={"validatorUrl": None},
            )
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _page(
            get_redoc_html(
                openapi_url=root + openapi_url,
                title=f"{app.title} - ReDoc",
                redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
                with_google_fonts=False,
            )
        )

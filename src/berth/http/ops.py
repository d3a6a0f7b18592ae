"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from starlette.responses import Response

from berth.container import Services
from berth.http.context import current_services
from berth.http.responses import json_response

router = APIRouter()


@router.get("/healthz", summary="The process is up")
async def healthz() -> Response:
    return json_response({"status": "ok"})


@router.get("/readyz", summary="The database answers")
async def readyz(svc: Services = Depends(current_services)) -> Response:
    try:
        await svc.database.ping()
    except Exception as exc:  # any failure to reach the database means "not ready"
        return json_response({"status": "unavailable", "detail": type(exc).__name__}, status_code=503)
    return json_response({"status": "ok"})

"""Liveness and readiness probes, and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from starlette.responses import PlainTextResponse, Response

from berth.container import Services
from berth.http.context import current_services
from berth.http.responses import json_response
from berth.store.deliveries_repo import STATUSES
from berth.store.faults import DatabaseUnavailable

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


@router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus metrics")
async def metrics(svc: Services = Depends(current_services)) -> Response:
    """The deliveries by status (read from the database, left out while it refuses
    connections) and this process's count of the database's refusals."""
    try:
        counts: dict[tuple[str, str], int] | None = await svc.webhooks.delivery_counts()
    except DatabaseUnavailable:
        counts = None
    outages = svc.database.outages
    lines = [
        "# HELP berth_database_refused_total Connections to the database that could not be made, by this process.",
        "# TYPE berth_database_refused_total counter",
        f"berth_database_refused_total {outages.refused}",
        "# HELP berth_database_outages_total Times the database began refusing connections, as this process saw it.",
        "# TYPE berth_database_outages_total counter",
        f"berth_database_outages_total {outages.episodes}",
        "# HELP berth_database_refusing 1 while the database refuses this process's connections.",
        "# TYPE berth_database_refusing gauge",
        f"berth_database_refusing {int(outages.ongoing)}",
    ]
    if counts is not None:
        lines += [
            "# HELP berth_deliveries Outbound deliveries (webhooks and mapping notifications) by status.",
            "# TYPE berth_deliveries gauge",
        ]
        for status in STATUSES:
            for kind in ("webhook", "mapping"):
                lines.append(
                    f'berth_deliveries{{kind="{kind}",status="{status}"}} {counts.get((kind, status), 0)}'
                )
    return PlainTextResponse("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

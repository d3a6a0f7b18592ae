"""A connection's monthly statement under /admin/api: JSON, or CSV with `Accept: text/csv`.
Every staff role reads it."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response, StreamingResponse

from berth.container import Services
from berth.domain.statements import Month, Statement
from berth.http.admin.exports import csv_download
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.views.statements import statement_csv, statement_file_name, statement_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


async def read_statement(svc: Services, connection_id: str, month: str) -> Statement:
    """The statement of the connection (id or name) for `month` (YYYY-MM): BadRequest naming a
    bad month, NotFound for an unknown connection."""
    period = Month.parse(month)
    connection = await svc.statements.connection(connection_id)
    return await svc.statements.of((await svc.catalog.snapshot()).catalog, connection, period)


def statement_download(statement: Statement) -> Response:
    name = statement_file_name(statement) + ".csv"
    return csv_download(statement_csv(statement), name)


def statement_json_response(statement: Statement) -> Response:
    """The statement as JSON, streamed: a month may hold thousands of lines."""
    return StreamingResponse(statement_json(statement), media_type="application/json")


@router.get(
    "/connections/{connectionId}/statements/{month}",
    summary="A connection's statement of a month (YYYY-MM): its lines and totals per currency",
    description=(
        "One line per booking sold that travels in the month (or, with BERTH_STATEMENT_BASIS="
        "confirmation, was confirmed in it), from the prices stored with each booking; cancelled "
        "bookings at zero. Amounts in minor units. `Accept: text/csv` answers the lines as CSV."
    ),
    responses={200: {"content": {"application/json": {}, "text/csv": {}}}},
)
async def get_statement(
    connectionId: str, month: str, request: Request, svc: Services = Depends(current_services)
) -> Response:
    statement = await read_statement(svc, connectionId, month)
    if "text/csv" in request.headers.get("accept", ""):
        return statement_download(statement)
    return statement_json_response(statement)

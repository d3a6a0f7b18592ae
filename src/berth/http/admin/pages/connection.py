"""One connection's page: its months with bookings and their statements' totals, with the
statement of each as PDF, CSV and JSON (served here for the signed-in staff, as the admin API
serves them for a token). Every staff role reads them."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page
from berth.http.admin.pages.session import Staff, staff
from berth.http.admin.statements import read_statement, statement_download, statement_json_response
from berth.services.offload import off_loop
from berth.views.statements import statement_file_name

router = APIRouter(route_class=PageRoute)


@router.get("/connections/{connection_id}")
async def connection_page(connection_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    connection = await me.services.statements.connection(connection_id)
    months = await me.services.statements.months(me.catalog.catalog, connection)
    return page(
        request,
        "connection.html",
        me,
        section="connections",
        connection=connection,
        statements=months,
        basis=me.services.statements.basis.value,
    )


@router.get("/connections/{connection_id}/statements/{month}.pdf")
async def statement_pdf(connection_id: str, month: str, me: Staff = Depends(staff)) -> Response:
    from berth.tickets.statement import render_statement  # reportlab loads with the first PDF

    statement = await read_statement(me.services, connection_id, month)
    content = await off_loop(
        render_statement, statement, me.catalog.catalog.supplier, me.services.settings.ticket_paper
    )
    name = statement_file_name(statement) + ".pdf"
    return Response(
        content,
        media_type="application/pdf",
        headers={"Content-Disposition": f'inline; filename="{name}"', "Cache-Control": "no-store"},
    )


@router.get("/connections/{connection_id}/statements/{month}.csv")
async def statement_csv_file(connection_id: str, month: str, me: Staff = Depends(staff)) -> Response:
    return statement_download(await read_statement(me.services, connection_id, month))


@router.get("/connections/{connection_id}/statements/{month}.json")
async def statement_json_file(connection_id: str, month: str, me: Staff = Depends(staff)) -> Response:
    return statement_json_response(await read_statement(me.services, connection_id, month))

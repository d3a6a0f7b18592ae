"""The reseller's mapping rows: PUT /mappings (the full set) and GET /mappings (vendor/mappings)."""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from starlette.responses import Response

from berth.container import Services
from berth.domain.errors import BadRequest
from berth.domain.input_errors import expectation, field_path
from berth.domain.mappings import MappingFilter, MappingUpload, Problem, mapping_json, upload_error
from berth.http.context import OctoRequest, octo_request, services
from berth.http.octo.common import octo_response
from berth.http.octo.schemas import ERROR_RESPONSES, MappingOut
from berth.http.types import Flag

router = APIRouter(responses=ERROR_RESPONSES)


class MappingRowBody(BaseModel):
    """The reseller's side of a row. `productId`, `optionId` and `unitId` are the supplier's:
    an upload may echo them back, and they are ignored. JSON types must match exactly."""

    model_config = ConfigDict(extra="ignore", strict=True)
    resellerReference: Annotated[str, Field(min_length=1, max_length=255)]
    resellerStatus: Annotated[str, Field(max_length=100)] | None = None
    resellerProduct: Annotated[str, Field(max_length=1000)] | None = None
    optionRequired: Flag | None = Field(default=None, description="Default true")
    unitRequired: Flag | None = Field(default=None, description="Default false")
    validityDays: Annotated[int, Field(ge=0, le=100000)] | None = None
    webhookUrl: Annotated[str, Field(max_length=2048)] | None = Field(
        default=None, description="Where the notification POST goes once the supplier maps the row"
    )

    def upload(self) -> MappingUpload:
        return MappingUpload(
            reseller_reference=self.resellerReference,
            reseller_status=self.resellerStatus,
            reseller_product=self.resellerProduct,
            option_required=True if self.optionRequired is None else self.optionRequired,
            unit_required=False if self.unitRequired is None else self.unitRequired,
            validity_days=self.validityDays,
            webhook_url=self.webhookUrl,
        )


_ROWS = TypeAdapter(list[MappingRowBody])
_SHAPE = "The body must be a JSON array of mapping rows (or an object with the array under 'mappings')"


def parse_upload(raw: bytes) -> list[MappingUpload]:
    """The rows of a PUT body: a bare array (requirements §4.4), or `{"mappings": [...]}`
    (a sample's form). Every bad row and field is named; nothing is applied if any is bad."""
    if not raw.strip():
        raise BadRequest("The request body is required: " + _SHAPE)
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"The request body is not valid JSON ({exc})") from None
    if isinstance(data, dict) and set(data) == {"mappings"}:
        data = data["mappings"]
    if not isinstance(data, list):
        raise BadRequest(_SHAPE)
    try:
        rows = _ROWS.validate_python(data)
    except ValidationError as exc:
        problems = [
            Problem(
                int(error["loc"][0]),
                field_path(error["loc"][1:]) or None,
                expectation(error),
            )
            for error in exc.errors()
        ]
        raise upload_error(problems) from None
    return [row.upload() for row in rows]


_PUT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"type": "array", "items": MappingRowBody.model_json_schema()},
            }
        },
    }
}


@router.put(
    "/mappings",
    response_model=list[MappingOut],
    summary="Send your full set of mapping rows (upsert by resellerReference; rows left out are removed)",
    openapi_extra=_PUT_BODY,
)
async def put_mappings(
    request: Request, octo: OctoRequest = Depends(octo_request), svc: Services = Depends(services)
) -> Response:
    uploads = parse_upload(await request.body())
    stored = await svc.mappings.replace_all(octo.connection.id, uploads)
    return octo_response(octo, [mapping_json(row) for row in stored])


@router.get("/mappings", response_model=list[MappingOut], summary="Your mapping rows")
async def get_mappings(
    productId: str | None = Query(default=None, max_length=200, description="Wins over productIds[]"),
    productIds: list[str] = Query(default=[], alias="productIds[]", max_length=200),
    optionId: str | None = Query(
        default=None, max_length=200, description="Wins over optionIds[]; DEFAULT: rows without an option"
    ),
    optionIds: list[str] = Query(
        default=[], alias="optionIds[]", max_length=200, description="DEFAULT: rows without an option"
    ),
    productIdsPlain: list[str] = Query(default=[], alias="productIds", include_in_schema=False),
    optionIdsPlain: list[str] = Query(default=[], alias="optionIds", include_in_schema=False),
    resellerReference: str | None = Query(default=None, max_length=255),
    resellerStatus: str | None = Query(default=None, max_length=100),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(services),
) -> Response:
    where = MappingFilter.from_query(
        product_id=productId,
        product_ids=[*productIds, *productIdsPlain],
        option_id=optionId,
        option_ids=[*optionIds, *optionIdsPlain],
        reseller_reference=resellerReference,
        reseller_status=resellerStatus,
    )
    rows = await svc.mappings.find(octo.connection.id, where)
    return octo_response(octo, [mapping_json(row) for row in rows])

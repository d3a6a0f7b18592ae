"""Self-service mapping (vendor/mappings, requirements §2.4 and §4.4): a reseller uploads its
listings, the supplier resolves each to a product, option and unit.

A row has two sides. The reseller owns `resellerReference` (the upsert key), `resellerStatus`,
`resellerProduct`, `optionRequired`, `unitRequired`, `validityDays` and `webhookUrl`: every
upload replaces them. The supplier owns `productId`, `optionId` and `unitId`: no upload ever
writes them. What a row *shows* follows the null rules of the requirements: `optionId` is null
while `optionRequired` is false, `unitId` null while `unitRequired` is false.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from berth.domain.catalog import Catalog, Option, Product, Unit
from berth.domain.errors import BadRequest, InvalidOptionId, InvalidProductId, InvalidUnitId
from berth.domain.webhooks import check_target, is_private_address

# The GET filter value that selects rows without an option (requirements §4.4).
DEFAULT_OPTION = "DEFAULT"
MAX_ROWS = 5000


def notification_target(row_id: str) -> str:
    """The delivery target (and subject) of a row's notifications: they are sent in order."""
    return f"mapping:{row_id}"


@dataclass(frozen=True)
class MappingRow:
    """A stored mapping row. Immutable and hashable: views carry tuples of these."""

    id: str
    connection_id: str
    position: int
    reseller_reference: str
    reseller_status: str | None
    reseller_product: str | None
    option_required: bool
    unit_required: bool
    validity_days: int | None
    webhook_url: str | None
    product_id: str | None
    option_id: str | None
    unit_id: str | None
    created_at: datetime
    updated_at: datetime
    mapped_at: datetime | None = None

    @property
    def resolved_option(self) -> str | None:
        """The option as the row shows it: null while no option is required."""
        return self.option_id if self.option_required else None

    @property
    def resolved_unit(self) -> str | None:
        return self.unit_id if self.unit_required else None

    @property
    def resolution(self) -> tuple[str | None, str | None, str | None]:
        return self.product_id, self.resolved_option, self.resolved_unit

    @property
    def mapped(self) -> bool:
        """Complete: a product, and an option and a unit where the row requires them."""
        return (
            self.product_id is not None
            and (not self.option_required or self.option_id is not None)
            and (not self.unit_required or self.unit_id is not None)
        )

    def applies_to(self, product_id: str, option_id: str) -> bool:
        """Whether the row belongs in `mappings[]` of an object of this product and option. A
        row mapped without an option (optionRequired false) stands for the whole product."""
        if not self.mapped or self.product_id != product_id:
            return False
        return self.resolved_option is None or self.resolved_option == option_id


@dataclass(frozen=True)
class MappingUpload:
    """The reseller's side of one uploaded row (what `PUT /mappings` may write)."""

    reseller_reference: str
    reseller_status: str | None = None
    reseller_product: str | None = None
    option_required: bool = True
    unit_required: bool = False
    validity_days: int | None = None
    webhook_url: str | None = None

    def _fields(self) -> tuple[object, ...]:
        return (
            self.reseller_status,
            self.reseller_product,
            self.option_required,
            self.unit_required,
            self.validity_days,
            self.webhook_url,
        )

    def changes(self, row: MappingRow) -> bool:
        """Whether storing this upload changes the row's reseller side (its order aside)."""
        return self._fields() != (
            row.reseller_status,
            row.reseller_product,
            row.option_required,
            row.unit_required,
            row.validity_days,
            row.webhook_url,
        )


@dataclass(frozen=True)
class Problem:
    index: int
    field: str | None
    message: str

    def text(self) -> str:
        where = f"Row [{self.index}]" + (f" {self.field}" if self.field else "")
        return f"{where}: {self.message}"


def upload_error(problems: Sequence[Problem]) -> BadRequest:
    """BAD_REQUEST naming each bad row and field; `problems` lists them for programs."""
    shown = "; ".join(p.text() for p in problems[:10])
    more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
    return BadRequest(
        f"The upload was not applied: {shown}{more}",
        problems=[{"index": p.index, "field": p.field, "message": p.message} for p in problems],
    )


def webhook_url_problem(url: str, allow_private: bool) -> str | None:
    """Why `url` cannot take notifications, or None. Host names are resolved (and checked
    again) by the delivery worker at each attempt; here only literal addresses are checked."""
    try:
        _, host = check_target(url)
    except BadRequest as exc:
        return exc.message
    if allow_private:
        return None
    try:
        address = str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None if host.lower() != "localhost" else "points to a non-public address"
    return "points to a non-public address" if is_private_address(address) else None


def check_uploads(uploads: Sequence[MappingUpload], allow_private: bool) -> None:
    """The rules a whole upload must meet; raises BAD_REQUEST and nothing is applied."""
    problems: list[Problem] = []
    if len(uploads) > MAX_ROWS:
        raise BadRequest(f"An upload may hold at most {MAX_ROWS} rows; {len(uploads)} given")
    seen: dict[str, int] = {}
    for index, upload in enumerate(uploads):
        first = seen.setdefault(upload.reseller_reference, index)
        if first != index:
            problems.append(
                Problem(
                    index,
                    "resellerReference",
                    f"{upload.reseller_reference!r} is also the reference of row [{first}]; "
                    "each reference may appear once",
                )
            )
        if upload.webhook_url is not None:
            problem = webhook_url_problem(upload.webhook_url, allow_private)
            if problem is not None:
                problems.append(Problem(index, "webhookUrl", problem))
    if problems:
        raise upload_error(problems)


@dataclass(frozen=True)
class UploadPlan:
    """What an upload changes: rows to insert, rows whose reseller side changes, rows to remove."""

    inserts: list[tuple[int, MappingUpload]] = field(default_factory=list)
    updates: list[tuple[MappingRow, int, MappingUpload]] = field(default_factory=list)
    removals: list[MappingRow] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.inserts or self.updates or self.removals)


def new_row(
    row_id: str, connection_id: str, position: int, upload: MappingUpload, now: datetime
) -> MappingRow:
    return MappingRow(
        id=row_id,
        connection_id=connection_id,
        position=position,
        reseller_reference=upload.reseller_reference,
        reseller_status=upload.reseller_status,
        reseller_product=upload.reseller_product,
        option_required=upload.option_required,
        unit_required=upload.unit_required,
        validity_days=upload.validity_days,
        webhook_url=upload.webhook_url,
        product_id=None,
        option_id=None,
        unit_id=None,
        created_at=now,
        updated_at=now,
    )


def plan_upload(existing: Iterable[MappingRow], uploads: Sequence[MappingUpload]) -> UploadPlan:
    """Upsert by reference, remove what the upload leaves out (requirements §4.4 rules 2-3).
    Unchanged rows are left alone, so sending the same set twice changes nothing."""
    by_reference = {row.reseller_reference: row for row in existing}
    plan = UploadPlan()
    for position, upload in enumerate(uploads):
        row = by_reference.pop(upload.reseller_reference, None)
        if row is None:
            plan.inserts.append((position, upload))
        elif upload.changes(row) or row.position != position:
            plan.updates.append((row, position, upload))
    plan.removals.extend(by_reference.values())
    return plan


def apply_upload(row: MappingRow, position: int, upload: MappingUpload, now: datetime) -> MappingRow:
    """The row with its reseller side replaced; the supplier's side is kept as it is. Moving a
    row within the upload is not a change of the row (`updated_at` stays)."""
    return replace(
        row,
        position=position,
        reseller_status=upload.reseller_status,
        reseller_product=upload.reseller_product,
        option_required=upload.option_required,
        unit_required=upload.unit_required,
        validity_days=upload.validity_days,
        webhook_url=upload.webhook_url,
        updated_at=now if upload.changes(row) else row.updated_at,
    )


@dataclass(frozen=True)
class Resolution:
    """What the supplier chose for a row."""

    product_id: str | None
    option_id: str | None = None
    unit_id: str | None = None


def _unit_in(options: Iterable[Option], unit_id: str) -> Unit | None:
    return next((u for o in options for u in o.units if u.id == unit_id), None)


def check_resolution(catalog: Catalog, row: MappingRow, chosen: Resolution) -> Resolution:
    """Validate the supplier's choice against the catalogue and the row's requirements.

    `productId` is always needed; `optionId` when the row requires an option and `unitId` when
    it requires a unit, and neither is taken when the row does not require it (the row would
    show it as null). A unit must belong to the chosen option, or without an option to one of
    the product's options.
    """
    if not chosen.product_id:
        raise BadRequest("productId is required", field="productId")
    product: Product | None = catalog.product(chosen.product_id)
    if product is None:
        raise InvalidProductId(chosen.product_id)
    option: Option | None = None
    if row.option_required:
        if not chosen.option_id:
            raise BadRequest("optionId is required: the row's optionRequired is true", field="optionId")
        option = product.option(chosen.option_id)
        if option is None:
            raise InvalidOptionId(chosen.option_id, product.id)
    elif chosen.option_id is not None:
        raise BadRequest(
            "optionId must not be given: the row's optionRequired is false (it is sent as null)",
            field="optionId",
        )
    if row.unit_required:
        if not chosen.unit_id:
            raise BadRequest("unitId is required: the row's unitRequired is true", field="unitId")
        unit = (
            option.unit(chosen.unit_id) if option is not None else _unit_in(product.options, chosen.unit_id)
        )
        if unit is None and option is not None:
            raise InvalidUnitId(chosen.unit_id, option.id)
        if unit is None:
            error = InvalidUnitId(chosen.unit_id, product.id)
            error.message = (
                f"The unit {chosen.unit_id!r} is not a unit of any option of product {product.id!r}"
            )
            raise error
    elif chosen.unit_id is not None:
        raise BadRequest(
            "unitId must not be given: the row's unitRequired is false (it is sent as null)", field="unitId"
        )
    return Resolution(
        product.id, option.id if option else None, chosen.unit_id if row.unit_required else None
    )


def resolve(row: MappingRow, chosen: Resolution, now: datetime) -> MappingRow:
    return replace(
        row,
        product_id=chosen.product_id,
        option_id=chosen.option_id,
        unit_id=chosen.unit_id,
        updated_at=now,
        mapped_at=now,
    )


def needs_notification(before: MappingRow, after: MappingRow) -> bool:
    """The reseller is told when a row becomes mapped, or its resolved ids change."""
    if not after.mapped or after.webhook_url is None:
        return False
    return not before.mapped or before.resolution != after.resolution


@dataclass(frozen=True)
class MappedRows:
    """A connection's mapped rows, indexed by product: `mappings[]` is looked up once per
    serialized object, so a long availability range costs no scan of every row per slot.
    Immutable and hashable (views carry it); equality and hash follow `rows`."""

    rows: tuple[MappingRow, ...] = ()
    _by_product: dict[str, tuple[MappingRow, ...]] = field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        grouped: dict[str, list[MappingRow]] = {}
        for row in self.rows:
            if row.mapped and row.product_id is not None:
                grouped.setdefault(row.product_id, []).append(row)
        self._by_product.update({product: tuple(rows) for product, rows in grouped.items()})

    def matching(self, product_id: str, option_id: str) -> list[MappingRow]:
        """The rows for an object of this product and option, in the upload's order."""
        return [row for row in self._by_product.get(product_id, ()) if row.applies_to(product_id, option_id)]


@dataclass(frozen=True)
class MappingFilter:
    """GET /mappings filters, precedence already applied (a single id wins over the list)."""

    product_ids: tuple[str, ...] | None = None
    option_ids: tuple[str, ...] | None = None
    reseller_reference: str | None = None
    reseller_status: str | None = None

    @classmethod
    def from_query(
        cls,
        product_id: str | None,
        product_ids: Sequence[str],
        option_id: str | None,
        option_ids: Sequence[str],
        reseller_reference: str | None = None,
        reseller_status: str | None = None,
    ) -> MappingFilter:
        return cls(
            product_ids=(product_id,) if product_id is not None else (tuple(product_ids) or None),
            option_ids=(option_id,) if option_id is not None else (tuple(option_ids) or None),
            reseller_reference=reseller_reference,
            reseller_status=reseller_status,
        )


def mapping_json(row: MappingRow) -> dict[str, Any]:
    """The mapping row shape (requirements §2.4), with its null rules: `optionId` is null while
    `optionRequired` is false, `unitId` while `unitRequired` is false. It is also the body of
    the notification POST to the row's `webhookUrl`."""
    return {
        "resellerReference": row.reseller_reference,
        "resellerStatus": row.reseller_status,
        "resellerProduct": row.reseller_product,
        "productId": row.product_id,
        "optionId": row.resolved_option,
        "unitId": row.resolved_unit,
        "optionRequired": row.option_required,
        "unitRequired": row.unit_required,
        "validityDays": row.validity_days,
        "webhookUrl": row.webhook_url,
    }

"""Supplier, product, option and unit objects as OCTO core defines them, plus capability fields."""

from __future__ import annotations

from berth.capabilities.base import JSON, View
from berth.capabilities.registry import active
from berth.domain.catalog import AvailabilityType, DurationUnit, Option, Product, Supplier, Unit


def supplier_view(supplier: Supplier, endpoint: str, view: View) -> JSON:
    contact = supplier.contact
    out: JSON = {
        "id": supplier.id,
        "name": supplier.name,
        "endpoint": endpoint,
        "contact": {
            "website": contact.website,
            "email": contact.email,
            "telephone": contact.telephone,
            "address": contact.address,
        },
    }
    for capability in active(view.capabilities):
        capability.supplier_fields(supplier, out, view)
    return out


def unit_view(product: Product, option: Option, unit: Unit, view: View) -> JSON:
    r = unit.restrictions
    out: JSON = {
        "id": unit.id,
        "internalName": unit.internal_name,
        "reference": unit.reference,
        "type": str(unit.type),
        "restrictions": {
            "minAge": r.min_age,
            "maxAge": r.max_age,
            "idRequired": r.id_required,
            "minQuantity": r.min_quantity,
            "maxQuantity": r.max_quantity,
            "paxCount": r.pax_count,
            "accompaniedBy": list(r.accompanied_by),
        },
        "requiredContactFields": [str(f) for f in unit.required_contact_fields],
    }
    for capability in active(view.capabilities):
        capability.unit_fields(product, option, unit, out, view)
    return out


def cutoff_text(amount: int, unit: DurationUnit) -> str:
    return f"{amount} {unit.value}{'' if amount == 1 else 's'}"


def option_view(product: Product, option: Option, view: View) -> JSON:
    out: JSON = {
        "id": option.id,
        "default": option is product.default_option,
        "internalName": option.internal_name,
        "reference": option.reference,
        "availabilityLocalStartTimes": (
            option.local_start_times if product.availability_type is AvailabilityType.START_TIME else []
        ),
        "cancellationCutoff": cutoff_text(option.cancellation_cutoff_amount, option.cancellation_cutoff_unit),
        "cancellationCutoffAmount": option.cancellation_cutoff_amount,
        "cancellationCutoffUnit": str(option.cancellation_cutoff_unit),
        "requiredContactFields": [str(f) for f in option.required_contact_fields],
        "restrictions": {
            "minUnits": option.restrictions.min_units,
            "maxUnits": option.restrictions.max_units,
        },
        "units": [unit_view(product, option, unit, view) for unit in option.units],
    }
    for capability in active(view.capabilities):
        capability.option_fields(product, option, out, view)
    return out


def product_view(product: Product, view: View) -> JSON:
    out: JSON = {
        "id": product.id,
        "internalName": product.internal_name,
        "reference": product.reference,
        "locale": product.locale,
        "timeZone": product.time_zone,
        "allowFreesale": product.allow_freesale,
        "instantConfirmation": product.instant_confirmation,
        "instantDelivery": product.instant_delivery,
        "availabilityRequired": product.availability_required,
        "availabilityType": str(product.availability_type),
        "deliveryFormats": [str(f) for f in product.delivery_formats],
        "deliveryMethods": [str(m) for m in product.delivery_methods],
        "redemptionMethod": str(product.redemption_method),
        "options": [option_view(product, option, view) for option in product.options],
    }
    for capability in active(view.capabilities):
        capability.product_fields(product, out, view)
    return out

"""Postal addresses written in their country's order: where the postal code stands beside
the town (`20457 Hamburg`, `London, SE1 9PP`, `Austin, TX 78701`)."""

from __future__ import annotations

from berth.domain.catalog import PostalAddress

# Countries that write the postal code before the town; those that write it after the region
# (`TX 78701`); the rest (GB, IE, ...) write it last, after the town and region.
CODE_FIRST = frozenset({
    "AT", "BE", "BG", "CH", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU",
    "IS", "IT", "LI", "LT", "LU", "LV", "MC", "NL", "NO", "PL", "PT", "RO", "SE", "SI", "SK",
    "DZ", "MA", "TN", "TR", "IL", "MX", "BR", "AR", "CL", "CN", "TW", "RU", "UA",
})  # fmt: skip
REGION_WITH_CODE = frozenset({"US", "CA", "AU"})


def address_parts(address: PostalAddress) -> list[str]:
    """The address's lines, without the country: street, then the town with its postal code
    (and region) in the order of the address's country."""
    town = address.address_locality
    region = address.address_region
    code = address.postal_code
    country = (address.address_country or "").upper()
    if country in CODE_FIRST:
        place = " ".join(p for p in (code, town) if p)
        tail = [place, region]
    elif country in REGION_WITH_CODE:
        tail = [town, " ".join(p for p in (region, code) if p)]
    else:
        tail = [town, region, code]
    return [p for p in (address.street_address, *tail) if p]

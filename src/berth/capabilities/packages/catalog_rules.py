"""octo/packages' catalogue rules: includes name existing products and options that are not
packages, include ids are unique per option, required includes can book every unit."""

from __future__ import annotations

from berth.domain.catalog import Catalog, Option, PackageInclude, Product, include_unit
from berth.domain.catalog.rules import CatalogRule, Path, Problem


def package_problems(catalog: Catalog) -> list[tuple[Path, str]]:
    """octo/packages: includes name existing products and options that are not packages; include
    ids are unique per option; required includes can book every unit of the package option."""
    problems: list[tuple[Path, str]] = []
    for p_index, product in enumerate(catalog.products):
        for o_index, option in enumerate(product.options):
            seen: set[str] = set()
            for g_index, group in enumerate(option.package_includes):
                g_path: Path = ("products", p_index, "options", o_index, "packageIncludes", g_index)
                required = sum(1 for include in group.includes if include.required)
                if group.count is not None and required > group.count:
                    problems.append(
                        ((*g_path, "count"), f"{required} includes are required, more than count")
                    )
                for i_index, include in enumerate(group.includes):
                    i_path: Path = (*g_path, "includes", i_index)
                    if include.id in seen:
                        problems.append(((*i_path, "id"), f"duplicate include id {include.id!r}"))
                    seen.add(include.id)
                    problems.extend(_include_problems(catalog, product, option, include, i_path))
    return problems


def _include_problems(
    catalog: Catalog, product: Product, option: Option, include: PackageInclude, path: Path
) -> list[tuple[Path, str]]:
    included = catalog.product(include.product_id)
    if included is None:
        return [((*path, "productId"), f"no product {include.product_id!r} in the catalogue")]
    if included.id == product.id or included.is_package:
        return [((*path, "productId"), f"{included.id!r} is a package; packages cannot include packages")]
    included_option = included.option(include.option_id)
    if included_option is None:
        return [((*path, "optionId"), f"product {included.id!r} has no option {include.option_id!r}")]
    problems: list[tuple[Path, str]] = []
    if not include.availability_required and included.availability_required:
        problems.append(
            (
                (*path, "availabilityRequired"),
                f"product {included.id!r} requires an availability, so this include does too",
            )
        )
    if include.availability_required and not product.package_booking_availability_required:
        problems.append(
            (
                (*path, "availabilityRequired"),
                "the package product has packageBookingAvailabilityRequired false",
            )
        )
    if include.required:
        for unit in option.units:
            if include_unit(included_option, unit) is None:
                problems.append(
                    (
                        (*path, "optionId"),
                        f"unit {unit.id!r} ({unit.type.value}) has no unit of that id or type in "
                        f"{included.id!r}/{included_option.id!r}",
                    )
                )
    return problems


class PackageRules(CatalogRule):
    def catalog_problems(self, catalog: Catalog) -> list[Problem]:
        return package_problems(catalog)

"""octo/extras' catalogue rules: the extras of an option."""

from __future__ import annotations

from berth.domain.catalog import Option, Product
from berth.domain.catalog.rules import CatalogRule, Path, Problem, duplicate_ids, price_problems


class ExtraRules(CatalogRule):
    def option_problems(self, product: Product, option: Option, path: Path) -> list[Problem]:
        extras_path: Path = (*path, "extras")
        problems: list[Problem] = list(duplicate_ids([e.id for e in option.extras], extras_path, "extra"))
        currencies = product.currencies
        for index, extra in enumerate(option.extras):
            e_path: Path = (*extras_path, index)
            if extra.max_quantity is not None and extra.min_quantity > extra.max_quantity:
                problems.append(
                    ((*e_path, "minQuantity"), f"minQuantity is above maxQuantity ({extra.max_quantity})")
                )
            problems.extend(price_problems(extra.prices, (*e_path, "prices"), currencies))
            problems.extend(
                ((*e_path, "prices", p_index, "currency"), f"the product is not priced in {price.currency}")
                for p_index, price in enumerate(extra.prices)
                if price.currency not in currencies
            )
            if extra.stock is not None and not product.availability_required:
                problems.append(((*e_path, "stock"), "a stock per departure needs availability"))
        return problems

"""octo/pricing: currencies on products, `pricingFrom` on options (per booking) or units."""

from __future__ import annotations

from berth.capabilities.base import JSON, Capability, View
from berth.domain.catalog import Option, Price, PricingPer, Product, Unit
from berth.domain.pricing import lowest_prices


def pricing_json(price: Price) -> JSON:
    return {
        "original": price.original_or_retail,
        "retail": price.retail,
        "net": price.net,
        "currency": price.currency,
        "currencyPrecision": price.currency_precision,
        "includedTaxes": [
            {"name": tax.name, "retail": tax.retail, "original": tax.original, "net": tax.net}
            for tax in price.included_taxes
        ],
    }


class PricingCapability(Capability):
    id = "octo/pricing"
    docs = "https://docs.octo.travel/octo-api-core/pricing"

    def product_fields(self, product: Product, out: JSON, view: View) -> None:
        out["defaultCurrency"] = product.currency
        out["availableCurrencies"] = product.currencies
        out["pricingPer"] = str(product.pricing_per)

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        if product.pricing_per is PricingPer.BOOKING:
            out["pricingFrom"] = [
                pricing_json(p) for p in lowest_prices(option.booking_prices, product.currencies)
            ]

    def unit_fields(self, product: Product, option: Option, unit: Unit, out: JSON, view: View) -> None:
        if product.pricing_per is PricingPer.UNIT:
            out["pricingFrom"] = [pricing_json(p) for p in lowest_prices(unit.prices, product.currencies)]

"""The fixtures of the web shop's HTTP tests: settings paying against the fake Stripe (`paying`),
the shop opened on its test catalogue (`shop`) and the app serving it (`app`). A test module
takes the ones it needs by importing them (`settings = paying` to pay by card) and naming them
in its `__all__`."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from berth.app import create_app
from berth.container import Services
from berth.fake_stripe import FakeStripe
from berth.settings import Settings
from tests.shop_helpers import open_shop
from tests.stripe_helpers import paying_settings


@pytest.fixture(name="settings")
def paying(settings: Settings, localstripe: FakeStripe) -> Settings:
    return paying_settings(settings, localstripe)


@pytest.fixture
async def shop(services: Services) -> Services:
    return await open_shop(services)


@pytest.fixture
def app(shop: Services) -> FastAPI:
    return create_app(services=shop)

"""The hypothesis profiles of the tests that run whole scenarios against real servers (a
database, localstripe): few examples by default, so that the suite stays fast, and many when
asked (`BERTH_TEST_PROFILE=thorough`), e.g. before changing the payments service."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Each example of these builds its own services and database and talks to localstripe: a
# second or less, so no deadline; the example database keeps failures to replay them first.
settings.register_profile(
    "scenarios-quick", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "scenarios-thorough", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
PROFILE = f"scenarios-{os.environ.get('BERTH_TEST_PROFILE', 'quick')}"

# The settings of the payment interleavings (tests/test_payments_interleavings.py).
interleavings = settings(settings.get_profile(PROFILE))

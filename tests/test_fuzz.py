"""Schemathesis against Berth's own OpenAPI document, in process (ASGI), with the demo data.

Every operation is called with generated valid and invalid input; every answer must be free of
server errors and match what the document declares (status, content type, headers, body
schema), and input the document rules out must be refused. A stateful run chains operations
through the links schemathesis infers (reserve → get/confirm/extend/cancel, order → …).

Bounded for CI by BERTH_FUZZ_EXAMPLES (examples per operation, default 8) and
BERTH_FUZZ_STEPS (stateful scenarios, default 25); `scripts/fuzz.py` runs it longer.

Checks left out, and why:
- `positive_data_acceptance`: a schema-valid request may still name an unknown product or
  booking; OCTO answers those with an error by design.
- `missing_required_header` and `ignored_auth`: they expect 401/403, and OCTO errors are HTTP
  400 with `UNAUTHORIZED` (docs/decisions.md, "Authentication errors"). Authentication itself is
  covered by tests/test_auth_and_errors.py.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky
from requests.structures import CaseInsensitiveDict
from schemathesis.core.mutations import OperatorKind
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation import GenerationMode
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    ignored_auth,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
)

from berth.app import create_app
from berth.container import Services, build_services
from berth.demo.loader import DEMO_ADMIN_TOKEN, load_demo
from berth.services.availability import AvailabilityQuery
from berth.settings import Settings
from tests.databases import PostgresDatabase, SqliteTemplate

EXAMPLES = int(os.environ.get("BERTH_FUZZ_EXAMPLES", "8"))
STEPS = int(os.environ.get("BERTH_FUZZ_STEPS", "25"))
RANDOM = os.environ.get("BERTH_FUZZ_RANDOM") == "1"  # CI is repeatable; the long run explores
EXCLUDED = [positive_data_acceptance, missing_required_header, ignored_auth]
READER = {
    "Authorization": "Bearer demo-reseller-a",
    "Octo-Capabilities": "octo/cart, octo/pricing, octo/pickups, octo/questions, octo/extras",
}
STAFF = {"Authorization": f"Bearer {DEMO_ADMIN_TOKEN}"}
# Requests sent, by operation ("stateful" for the sequences); tests/conftest.py prints the count.
CASES: Counter[str] = Counter()
# (status, OCTO error code or "-", whether the request carried valid credentials)
ANSWERS: Counter[tuple[int, str, bool]] = Counter()
STATEFUL: Counter[tuple[str, int]] = Counter()  # (operation, status) in sequences
SERVED: set[str] = set()  # operations that answered 200 at least once
OPEN_SLOTS: list[str] = []  # upcoming Thames departures, found when the demo is loaded


def credentials(path: str) -> dict[str, str]:
    return STAFF if path.startswith("/admin/") else READER


# The app is built when the module loads, so schemathesis can read its OpenAPI document and
# generate one test per operation; the `fuzz_services` fixture then gives it a real database.
# (The document does not depend on the services; no request reaches them before then.)
APP = create_app(
    services=build_services(Settings(database_url="sqlite+aiosqlite:///:memory:", run_worker=False))
)
# The coverage phase (every boundary value and unexpected method the document implies, about
# 80 requests per operation, each text at its maxLength among them) takes half a minute; it runs
# on PostgreSQL too, where a column shorter than its field's limit answers 500
# (BERTH_FUZZ_COVERAGE=0 leaves it out).
COVERAGE = os.environ.get("BERTH_FUZZ_COVERAGE", "1") == "1"
schema = schemathesis.openapi.from_asgi(
    "/openapi.json",
    APP,
    config=schemathesis.Config.from_dict(
        {"generation": {"with-security-parameters": False}, "phases": {"coverage": {"enabled": COVERAGE}}}
    ),
)


@pytest.fixture(scope="module", autouse=True)
def fuzz_services(
    test_database: SqliteTemplate | PostgresDatabase, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Services]:
    """Services on their own database with the demo loaded. They run on the event loop
    schemathesis drives the app with; the demo is loaded on another loop by other services."""
    settings = Settings(
        database_url=test_database.fresh(tmp_path_factory.mktemp("fuzz")),
        admin_token=DEMO_ADMIN_TOKEN,
        log_level="CRITICAL",
        rate_limit_per_minute=0,
        run_worker=False,  # nothing is ever delivered: fuzzed webhook URLs go nowhere
        webhook_allow_private_targets=True,  # no DNS look-ups of fuzzed host names
    )

    async def load() -> None:
        loader = build_services(settings)
        try:
            await load_demo(loader)
            catalog = (await loader.catalog.snapshot()).catalog
            start = loader.clock().date() + timedelta(days=2)
            query = AvailabilityQuery(
                product_id="thames-sightseeing", option_id="DEFAULT",
                local_date_start=start, local_date_end=start + timedelta(days=6),
            )  # fmt: skip
            OPEN_SLOTS[:] = [item.slot.id for item in await loader.availability.check(catalog, query)]
        finally:
            await loader.close()

    asyncio.run(load())
    services = build_services(settings)
    placeholder, APP.state.services = APP.state.services, services
    yield services
    APP.state.services = placeholder
    asgi._get_portal().call(services.close)
    if isinstance(test_database, PostgresDatabase):
        asyncio.run(test_database.empty())


def _text_query_parameters() -> frozenset[str]:
    """Query parameters whose schema takes any text (a string, or a list of strings, with no
    format, pattern or enum that "false" or "1" could fail)."""
    names: set[str] = set()
    for operations in APP.openapi()["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                branches = [schema, *schema.get("anyOf", []), schema.get("items", {})]
                branches += [b.get("items", {}) for b in schema.get("anyOf", [])]
                free = [
                    b
                    for b in branches
                    if b.get("type") == "string" and not {"format", "pattern", "enum"} & b.keys()
                ]
                if parameter["in"] == "query" and free:
                    names.add(parameter["name"])
    return frozenset(names)


TEXT_QUERY_PARAMETERS = _text_query_parameters()


def excluded_checks(case: schemathesis.Case[Any]) -> list[Any]:
    """A query string carries text only: a type swapped into a text query parameter (false, an
    array) reaches Berth as text that parameter accepts, so the case is no negative data.
    Schemathesis allows for one such swap, not for several in one case
    (`GET /octo/mappings?productId=false&productIds[]=false`), nor for a negated `anyOf` that
    came out as a list (`?resellerReference=a&resellerReference=b`)."""
    meta = case.meta
    if meta is None or meta.generation.mode is not GenerationMode.NEGATIVE:
        return EXCLUDED
    mutations = getattr(meta.phase.data, "mutations", ())
    query = case.query or {}
    swapped_text = [
        m.parameter_location is ParameterLocation.QUERY
        and m.parameter in TEXT_QUERY_PARAMETERS
        and (
            m.operator is OperatorKind.CHANGE_TYPE
            # A negated `anyOf` of text or null may come out as a list (the parameter sent
            # twice) or another type: a type swap in effect. Text that breaks a length or
            # pattern stays negative data.
            or (m.operator is OperatorKind.NEGATE_CONSTRAINTS and not isinstance(query.get(m.parameter), str))
        )
        for m in mutations
    ]
    return [*EXCLUDED, negative_data_rejection] if swapped_text and all(swapped_text) else EXCLUDED


@schema.auth(cache_by_key=lambda case, context: context.operation.path.startswith("/admin/"))
class Credentials:
    """The demo reseller's key on the OCTO API, the admin token on the admin API. (Given as
    the schema's auth, so schemathesis knows they are not part of the generated input.)"""

    def get(self, case: schemathesis.Case[Any], context: schemathesis.AuthContext) -> dict[str, str]:
        return credentials(context.operation.path)

    def set(
        self, case: schemathesis.Case[Any], data: dict[str, str], context: schemathesis.AuthContext
    ) -> None:
        headers = CaseInsensitiveDict(case.headers or {})
        headers.update(data)
        case.headers = headers


FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RANDOM,
    suppress_health_check=list(HealthCheck),
    database=None,
)


@schema.parametrize()
@FUZZ_SETTINGS
def test_every_operation(case: schemathesis.Case[Any]) -> None:
    CASES[case.operation.label] += 1
    response = case.call()
    ANSWERS[_answer(response)] += 1
    if response.status_code == 200:
        SERVED.add(case.operation.label)
    case.validate_response(response, excluded_checks=excluded_checks(case))


def test_stateful_sequences() -> None:
    """Sequences of calls chained by the links schemathesis infers (a reservation's uuid into
    confirm, extend, cancel; an order's id into its routes; a webhook's id...)."""
    # Revoking a connection the sequence found (the demo reseller's own) would lock every later
    # step out; revocation is covered by tests/test_auth_and_errors.py.
    machine_class = schema.exclude(path_regex=r"/revoke$").as_state_machine()
    failures: list[Exception] = []

    class Machine(machine_class):  # type: ignore[misc, valid-type]
        def before_call(self, case: schemathesis.Case[Any]) -> None:
            # Steer generated reservations to a real departure (the rest of the body stays
            # generated) so that sequences get past the reservation to confirm, extend, cancel.
            # Only schema-valid ones: steering a negative case could overwrite the very fields
            # that made it invalid, and schemathesis would still expect it refused.
            positive = case.meta is None or case.meta.generation.mode is GenerationMode.POSITIVE
            if (
                positive
                and case.operation.label == "POST /octo/bookings"
                and isinstance(case.body, dict)
                and OPEN_SLOTS
            ):
                pick = len(str(case.body)) % 4
                if pick:
                    case.body.update(
                        productId="thames-sightseeing", optionId="DEFAULT",
                        availabilityId=OPEN_SLOTS[len(str(case.body)) % len(OPEN_SLOTS)],
                        unitItems=[{"unitId": "adult"}] * pick,
                    )  # fmt: skip
                    case.body.pop("orderId", None)

        def get_call_kwargs(self, case: schemathesis.Case[Any]) -> dict[str, Any]:
            CASES["stateful"] += 1
            return {}

        def validate_response(self, response: Any, case: schemathesis.Case[Any], **kwargs: Any) -> None:
            ANSWERS[_answer(response)] += 1
            STATEFUL[(case.operation.label, response.status_code)] += 1
            try:
                case.validate_response(response, excluded_checks=excluded_checks(case))
            except Exception as exc:
                failures.append(exc)
                raise

    # The sequences run against one live database, so Hypothesis cannot replay one to the same
    # answers: it stops with `Flaky`. A failure seen before that is the real finding; without
    # one, the run goes on with fresh sequences until the budget of steps is spent.
    for _ in range(10):
        before = CASES["stateful"]
        try:
            Machine.run(
                settings=settings(
                    max_examples=STEPS, stateful_step_count=8, deadline=None,
                    phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
                    database=None,
                )
            )  # fmt: skip
        except Flaky:
            if failures:
                raise failures[0] from None
        else:
            break
        if CASES["stateful"] - before == 0 or CASES["stateful"] >= STEPS * 8:
            break
    if failures:
        raise failures[0]


def _answer(response: Any) -> tuple[int, str, bool]:
    try:
        body = response.json()
    except ValueError:
        body = None
    sent = response.request.headers.get("Authorization")
    valid = sent in (READER["Authorization"], STAFF["Authorization"])
    return response.status_code, body.get("error", "-") if isinstance(body, dict) else "-", valid


def test_the_fuzzer_reached_the_api() -> None:
    """The generated requests were authenticated and many were served: the run above tested
    Berth, not its front door. (Runs after the fuzz tests: pytest keeps file order.)"""
    if not any(name != "stateful" for name in CASES):
        pytest.skip("the per-operation fuzz tests did not run")
    # Only the requests schemathesis sent without valid credentials on purpose were refused.
    assert not any(code in ("UNAUTHORIZED", "FORBIDDEN") for _, code, valid in ANSWERS if valid), ANSWERS
    assert len(SERVED) >= 15, (sorted(SERVED), ANSWERS.most_common())
    assert not any(status >= 500 for status, _, _ in ANSWERS)

"""Property-based tests of the API against its own OpenAPI document (schemathesis).

Every operation is called with generated input and the editors' key: no 5xx, and status
codes, content types, headers and bodies as the document says. Real Postgres and Redis.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.app import create_app
from shared.settings import Settings
from tests.support.api import (
    API_KEYS,
    EDITOR_KEY,
    MAX_UPLOAD_BYTES,
    WEBHOOK_SECRET,
)

# Keys and limits are fixed here; the database and broker come from the fixtures at call time.
app = create_app(
    Settings(
        api_keys=API_KEYS.split(","),
        cms_webhook_secret=WEBHOOK_SECRET,
        max_upload_bytes=MAX_UPLOAD_BYTES,
    )
)
schema = schemathesis.openapi.from_asgi("/openapi.json", app)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def services(api_settings: Settings) -> Settings:
    """The test run's Postgres and Redis for the module-level app (settings read per call)."""
    app.state.settings = api_settings
    return api_settings


@schema.parametrize()
@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_conforms_to_its_openapi(case: schemathesis.Case, services: Settings) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {EDITOR_KEY}"}, checks=CHECKS)


def test_every_route_that_takes_a_body_documents_the_413_its_limit_gives() -> None:
    """The body limit answers before any route runs, so a route's own `responses` never lists
    it; schemathesis found the bulk route's 413 undocumented once it sent a large body."""
    document = app.openapi()
    with_body = {
        (path, method): operation
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict) and "requestBody" in operation
    }
    assert ("/v1/documents/bulk", "post") in with_body
    assert [name for name, op in with_body.items() if "413" not in op["responses"]] == []

"""tests/unit runs without Postgres or Redis (`uv run --group dev pytest tests/unit`, the fast
subset): a unit test that asks for one fails here instead of starting a server."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def test_services() -> None:
    pytest.fail("a unit test asked for Postgres or Redis: it belongs in tests/integration")

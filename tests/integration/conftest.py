"""Fixtures shared by the integration tests."""

from tests.support.embedded import embedded_env  # noqa: F401

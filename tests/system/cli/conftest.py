"""The `embedded_env` fixture for the `ingest` command runs below this folder."""

from tests.support.embedded import embedded_env  # noqa: F401

"""The `factory` fixture (a session maker on Postgres and on SQLite) for the state machine and
overview tests below this folder."""

from tests.support.states import factory  # noqa: F401

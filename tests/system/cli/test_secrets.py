"""Secrets: a URL-encoded password works in `ingest db upgrade`, and no
command, log line or error prints a password or an API key."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
import structlog
from sqlalchemy.engine import make_url

from shared import log
from shared.secrets import mask
from shared.settings import Settings
from tests.support.paths import ROOT
from tests.support.services import temporary_postgres_database

PASSWORD = "p@ss%w0rd:/x"
ENCODED = "p%40ss%25w0rd%3A%2Fx"
OPENAI_KEY = "sk-proj-THISISASECRETKEY0123456789"
SECRETS = (PASSWORD, ENCODED, "p@ss", "p%40ss", OPENAI_KEY)


def ingest(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The `ingest` command as an operator runs it, with `env` on top of a clean environment."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-c", "from worker.cli.main import main; main()", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def with_password(url: str, port: int | None = None) -> str:
    parsed = make_url(url)
    host = f"{parsed.host}:{port or parsed.port or 5432}"
    return f"postgresql://postgres:{ENCODED}@{host}/{parsed.database}"


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} printed:\n{text[-2000:]}"


def test_db_upgrade_works_with_a_url_encoded_password_and_never_prints_it(
    postgres_admin_url: str,
) -> None:
    with temporary_postgres_database(postgres_admin_url) as url:
        done = ingest("db", "upgrade", DATABASE_URL=with_password(url))
        assert done.returncode == 0, done.stderr[-3000:]
        assert_no_secret(done.stdout + done.stderr)
        engine = sa.create_engine(url)
        with engine.connect() as connection:
            assert connection.scalar(sa.text("SELECT version_num FROM alembic_version"))
        engine.dispose()


def test_a_database_that_refuses_the_connection_is_reported_without_the_password() -> None:
    done = ingest("db", "upgrade", DATABASE_URL=with_password("postgresql://127.0.0.1/x", 1))
    assert done.returncode != 0
    assert "127.0.0.1" in done.stderr  # the operator still learns where it tried
    assert_no_secret(done.stdout + done.stderr)


def test_an_url_that_cannot_be_parsed_is_reported_without_the_password() -> None:
    done = ingest("db", "upgrade", DATABASE_URL=f"postgresql://u:{ENCODED}@host:port/db")
    assert done.returncode != 0
    assert_no_secret(done.stdout + done.stderr)


def test_a_settings_error_does_not_echo_the_other_settings() -> None:
    done = ingest(
        "status",
        EMBEDDING_PROVIDER="openai",
        OPENAI_API_KEY="",
        DATABASE_URL=with_password("postgresql://127.0.0.1/x"),
    )
    assert done.returncode != 0 and "OPENAI_API_KEY" in done.stderr
    assert_no_secret(done.stdout + done.stderr)


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


@pytest.mark.parametrize("log_format", ["json", "console"])
def test_log_lines_mask_passwords_and_keys(restore_logging: None, log_format: str) -> None:
    settings = Settings(
        log_format=log_format,  # type: ignore[arg-type]
        openai_api_key=OPENAI_KEY,  # type: ignore[arg-type]
        database_url=f"postgresql://postgres:{ENCODED}@db/ingest",
        _env_file=None,  # type: ignore[call-arg]
    )
    stream = io.StringIO()
    log.configure_logging(settings, stream)
    logging.getLogger("kombu").error("Cannot connect to redis://:%s@redis:6379/0", PASSWORD)
    log.get_logger("x").warning("calling", url=settings.database_url, key=OPENAI_KEY)
    try:
        raise RuntimeError(f"bad key {OPENAI_KEY}")
    except RuntimeError:
        logging.getLogger("x").exception("failed")
    text = stream.getvalue()
    assert text.count("***") >= 4 and "redis:6379" in text and "@db/ingest" in text
    assert_no_secret(text)


def test_mask_keeps_what_helps_and_hides_credentials() -> None:
    settings = Settings(api_keys="editors:k-0123456789abcdef", _env_file=None)  # type: ignore[call-arg]
    assert mask("redis://:hunter2@redis:6379/0", settings) == "redis://:***@redis:6379/0"
    assert mask("postgresql://u:pw@db/x?sslmode=require", settings) == (
        "postgresql://u:***@db/x?sslmode=require"
    )
    assert mask("key k-0123456789abcdef refused", settings) == "key *** refused"
    assert mask("no secret here", settings) == "no secret here"

"""The API's logs: `LOG_FORMAT=json ingest api` writes only
JSON lines, uvicorn's and the access log's included, each request's with its request id; a key
in a query string or in `Authorization` never reaches the log; "could not send the task" names
the version."""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from collections.abc import Iterator

import httpx
import pytest
import structlog

from api.request_log import redact_query
from shared import ingest, log
from shared.settings import Settings
from tests.support.api import API_KEYS, EDITOR_KEY
from tests.support.versions import new_version
from tests.support.workers import WorkerProcess, free_port, spawn, wait_for


@pytest.fixture
def served(pg: str, redis_url: str, tmp_path) -> Iterator[tuple[str, WorkerProcess]]:
    """`ingest api` as operators run it, JSON logs asked for."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": pg,
        "REDIS_URL": redis_url,
        "QDRANT_URL": "http://127.0.0.1:1",  # beside Celery workers: a server (never reached)
        "API_KEYS": API_KEYS,
        "LOG_FORMAT": "json",
        "API_PORT": str(port),
    }
    env.pop("CMS_WEBHOOK_SECRET", None)
    command = [sys.executable, "-c", "from worker.cli.main import main; main()", "api"]
    process = WorkerProcess(spawn(command, env, tmp_path / "api.log"), tmp_path / "api.log")
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return process.process.poll() is not None

    try:
        wait_for(up, timeout=60, what="the API to serve")
        yield base, process
    finally:
        process.stop()


def test_every_line_of_the_api_is_json_and_requests_carry_their_id(
    served: tuple[str, WorkerProcess],
) -> None:
    base, process = served
    given = httpx.get(f"{base}/healthz", headers={"X-Request-ID": "proxy-abc-123"})
    assert given.headers["x-request-id"] == "proxy-abc-123"
    listed = httpx.get(f"{base}/v1/documents", headers={"Authorization": f"Bearer {EDITOR_KEY}"})
    assert listed.status_code == 200 and len(listed.headers["x-request-id"]) == 32
    leaked = httpx.get(
        f"{base}/v1/documents?api_key={EDITOR_KEY}&limit=5&q={EDITOR_KEY}",
        headers={"Authorization": f"Bearer {EDITOR_KEY}"},
    )
    assert leaked.status_code == 401
    wait_for(lambda: process.output().count('"request"') >= 3, timeout=10, what="access lines")
    process.stop()

    text = process.output()
    records = [json.loads(line) for line in text.splitlines() if line.strip()]  # all JSON
    messages = [r["message"] for r in records]
    assert any("Uvicorn running on" in m for m in messages)
    assert any("Application startup complete" in m for m in messages)
    assert any("API_KEYS" not in m and "CMS_WEBHOOK_SECRET" in m for m in messages)
    access = [r for r in records if r["logger"] == "api.access"]
    assert "proxy-abc-123" in [r["request_id"] for r in access if r["path"] == "/healthz"]
    assert {r["status"] for r in access} == {200, 401}
    assert [r["request_id"] for r in access if r["status"] == 401] == [
        leaked.headers["x-request-id"]
    ]
    refused = next(r for r in access if r["status"] == 401)
    assert refused["query"] == "api_key=***&limit=5&q=***"
    assert EDITOR_KEY not in text and "Bearer" not in text and "authorization" not in text.lower()


def test_key_like_query_values_are_redacted() -> None:
    assert redact_query("") == ""
    assert redact_query("page=2&status=failed") == "page=2&status=failed"
    assert redact_query("token=abc&access_token=x&X-Api-Key=y") == (
        "token=***&access_token=***&X-Api-Key=***"
    )
    assert redact_query("q=sk-proj-abcdef") == "q=***"
    assert redact_query("q=" + "A1b2" * 8) == "q=***"  # a long opaque token, whatever its name


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    log.configure_logging(Settings(log_format="json", _env_file=None), stream)  # type: ignore[call-arg]
    yield stream
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


def test_could_not_send_the_task_names_the_version(pg: str, json_lines: io.StringIO) -> None:
    def broker_down(_: object) -> None:
        raise ConnectionError("Error 111 connecting to redis:6379")

    content = b"# Knie\n\nTekst."
    registered = ingest.submit(
        new_version(content, "knie.md"),
        broker_down,
    )
    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    sent = [line for line in lines if "could not send the task" in line["message"]]
    assert len(sent) == 1 and sent[0]["level"] == "warning"
    assert sent[0]["version_id"] == str(registered.version_id)

"""Structured logs: JSON lines with the bound ids for machines, readable lines on a terminal."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator

import pytest
import structlog

from shared import log
from shared.settings import Settings
from worker.logging_hooks import task_ids


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    log.clear()  # ids another test's thread bound
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    log.clear()
    structlog.reset_defaults()


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_lines_carry_the_bound_ids_from_any_logger() -> None:
    stream = io.StringIO()
    log.configure_logging(Settings(log_format="json"), stream)
    version = uuid.uuid4()
    log.bind(version_id=version, stage="chunk", task_id="t-1", document_id=None)
    logging.getLogger("celery.app.trace").info("Task %s succeeded", "ingest.chunk")
    log.get_logger("worker.ingest").warning("slow stage", seconds=12.5)
    first, second = lines(stream)
    assert first["message"] == "Task ingest.chunk succeeded" and first["level"] == "info"
    assert first["version_id"] == str(version) and first["stage"] == "chunk"
    assert first["task_id"] == "t-1" and "document_id" not in first
    assert first["logger"] == "celery.app.trace" and first["timestamp"].endswith("Z")
    assert second["seconds"] == 12.5 and second["level"] == "warning"
    assert list(second)[:4] == ["timestamp", "level", "logger", "message"]


def test_with_bind_restores_what_was_bound_before() -> None:
    stream = io.StringIO()
    log.configure_logging(Settings(log_format="json"), stream)
    logger = logging.getLogger("api")
    log.bind(request_id="r-1")
    with log.bind(document_id="d-1", request_id="r-2"):
        logger.info("inside")
    logger.info("after")
    log.clear()
    logger.info("cleared")
    inside, after, cleared = lines(stream)
    assert (inside["request_id"], inside["document_id"]) == ("r-2", "d-1")
    assert after["request_id"] == "r-1" and "document_id" not in after
    assert "request_id" not in cleared


def test_auto_is_json_off_a_terminal_and_readable_on_one() -> None:
    piped, terminal = io.StringIO(), Terminal()
    log.configure_logging(Settings(log_format="auto"), piped)
    logging.getLogger("x").info("to a file")
    assert lines(piped)[0]["message"] == "to a file"
    log.configure_logging(Settings(log_format="auto"), terminal)
    ours = [h for h in logging.getLogger().handlers if getattr(h, "_ingest_handler", False)]
    assert len(ours) == 1  # reconfiguring replaced our handler instead of adding a second
    log.get_logger("x").info("to a person", version_id="v")
    assert piped.getvalue().count("\n") == 1
    text = terminal.getvalue()
    assert "to a person" in text and not text.lstrip().startswith("{")


def test_errors_keep_their_traceback_in_one_json_line() -> None:
    stream = io.StringIO()
    log.configure_logging(Settings(log_format="json", log_level="WARNING"), stream)
    logging.getLogger("x").info("below the level")
    try:
        raise ValueError("PDF is password-protected")
    except ValueError:
        logging.getLogger("x").exception("convert failed")
    (entry,) = lines(stream)
    assert (
        entry["level"] == "error" and "ValueError: PDF is password-protected" in entry["exception"]
    )


def test_task_ids_name_the_stage_and_what_the_task_works_on() -> None:
    document = str(uuid.uuid4())
    assert task_ids("ingest.delete", "t-9", (document,)) == {
        "task_id": "t-9",
        "task_name": "ingest.delete",
        "stage": "delete",
        "document_id": document,
    }
    assert task_ids("ingest.reap", "t-8", ()) == {
        "task_id": "t-8",
        "task_name": "ingest.reap",
        "stage": "reap",
    }

"""Structured logs for the API and the workers: JSON lines for machines, readable lines for people.

Every line, ours or a library's (Celery, SQLAlchemy, httpx), goes through one structlog
formatter on the root logger, so ids bound with `bind()` (document id, version id, stage, task
id, request id) appear on every line written while they are bound, whichever logger wrote it.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Mapping
from contextvars import Token
from types import TracebackType
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, Processor

from shared.secrets import mask
from shared.settings import Settings

_HANDLER_MARK = "_ingest_handler"


def wants_json(settings: Settings, stream: TextIO) -> bool:
    """JSON when asked, or on `auto` when nobody reads the stream on a terminal."""
    if settings.log_format == "auto":
        return not stream.isatty()
    return settings.log_format == "json"


def _shared_processors() -> list[Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.PositionalArgumentsFormatter(),
    ]


LEADING_FIELDS = ("timestamp", "level", "logger", "message")


def _leading_fields_first(_: object, __: str, event: EventDict) -> EventDict:
    """Time, level, logger and message first: a JSON line stays readable with `tail -f`."""
    first = {key: event.pop(key) for key in LEADING_FIELDS if key in event}
    return {**first, **event}


def configure_logging(settings: Settings, stream: TextIO | None = None) -> None:
    """Route every logger through one handler on `stream` (stderr); safe to call again."""
    stream = stream or sys.stderr
    as_json = wants_json(settings, stream)
    shared = _shared_processors()
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    final: list[Processor] = [structlog.stdlib.ProcessorFormatter.remove_processors_meta]
    if as_json:
        final += [
            structlog.processors.format_exc_info,
            structlog.processors.EventRenamer("message"),
            _leading_fields_first,
            structlog.processors.JSONRenderer(default=str),
        ]
    else:
        # No local variables in tracebacks: they hold URLs and keys.
        plain = structlog.dev.RichTracebackFormatter(show_locals=False)
        final.append(
            structlog.dev.ConsoleRenderer(colors=stream.isatty(), exception_formatter=plain)
        )
    final.append(_masking(settings))  # on the rendered line: messages, fields and tracebacks
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(foreign_pre_chain=shared, processors=final)
    )
    setattr(handler, _HANDLER_MARK, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level.upper())


def _masking(settings: Settings) -> Processor:
    """A last processor that masks passwords and keys in the rendered line."""

    def masked(_: object, __: str, line: str) -> str:
        return mask(line, settings)

    # The last processor is handed the rendered line (str), not the EventDict of `Processor`.
    return masked  # type: ignore[return-value]  # str in, not EventDict: see above


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A logger whose keyword arguments become fields of the line."""
    return structlog.stdlib.get_logger(name)


class Binding:
    """Ids bound to the current context; `with` restores what was bound before."""

    def __init__(self, tokens: Mapping[str, Token[Any]]) -> None:
        self._tokens = tokens

    def __enter__(self) -> Binding:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        structlog.contextvars.reset_contextvars(**self._tokens)


def bind(**ids: object) -> Binding:
    """Bind ids (UUIDs as text, None skipped) to every line of this thread or task.

    `bind(version_id=v)` binds until `clear()`; `with bind(request_id=r): ...` only inside.
    """
    values = {k: str(v) if isinstance(v, uuid.UUID) else v for k, v in ids.items()}
    clean = {k: v for k, v in values.items() if v is not None}
    return Binding(structlog.contextvars.bind_contextvars(**clean))


def clear() -> None:
    """Forget every bound id (a worker thread between two tasks)."""
    structlog.contextvars.clear_contextvars()

"""The overview `ingest status` prints (counts by status, recently changed documents), read
through the plain database driver (sqlite3 or psycopg), not SQLAlchemy.

Why: `ingest status` is the command a user types most, and it must answer in under 0.5 s;
importing SQLAlchemy and the models alone takes more than half of that. Read-only, two
queries over the tables `models.py` defines; `queries.status_counts` and
`queries.recent_documents` are the same reads for the API, through the ORM (a test compares
them).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from shared.errors import IngestError

STATUS_COUNTS = """
SELECT CASE WHEN d.deleted_at IS NOT NULL THEN 'deleted'
            ELSE COALESCE(v.status, 'received') END AS status,
       COUNT(*)
FROM documents d LEFT JOIN document_versions v ON v.id = d.latest_version_id
GROUP BY 1
"""

RECENT_DOCUMENTS = """
SELECT id, updated_at, title, external_id, hidden_at IS NOT NULL FROM documents
ORDER BY updated_at DESC LIMIT {limit:d}
"""

#: Documents hidden from search, and chunks hidden one by one (of undeleted documents).
HIDDEN_COUNTS = """
SELECT (SELECT COUNT(*) FROM documents WHERE hidden_at IS NOT NULL AND deleted_at IS NULL),
       (SELECT COUNT(*) FROM hidden_chunks h JOIN documents d ON d.id = h.document_id
        JOIN chunks c ON c.version_id = d.current_version_id AND c.point_id = h.point_id
        WHERE d.deleted_at IS NULL)
"""

RUNNING_REINDEX = """
SELECT j.collection, j.started_at, j.batch_tokens, j.sync_tokens, j.tokens_estimated,
       (SELECT COUNT(*) FROM embedding_batches b WHERE b.job_id = j.id),
       (SELECT COUNT(*) FROM embedding_batches b WHERE b.job_id = j.id AND b.read_at IS NOT NULL)
FROM reindex_jobs j WHERE j.state = 'running'
"""


@dataclass(frozen=True)
class RunningReindex:
    """A batch re-index under way (`ingest reindex --batch`), as `ingest status` shows it."""

    collection: str
    started_at: datetime
    batch_tokens: int
    sync_tokens: int
    tokens_estimated: int
    batches: int
    batches_read: int


@dataclass(frozen=True)
class RecentDocument:
    id: uuid.UUID
    updated_at: datetime
    title: str | None
    external_id: str
    hidden: bool = False  # hidden from search by an editor


def sqlite_path(url: str) -> str | None:
    """The file of a `sqlite:///...` URL (None for another database or `:memory:`)."""
    if not url.startswith("sqlite"):
        return None
    database = url.split("///", 1)[-1].split("?", 1)[0]
    return None if database in ("", ":memory:") else database


@contextmanager
def connect(database_url: str) -> Iterator[Any]:
    """A read-only DB-API connection for DATABASE_URL; driver errors become one-line
    `IngestError`s (`database`, or `no_schema` before `ingest db upgrade`)."""
    path = sqlite_path(database_url)
    if path is not None:
        try:
            with closing(sqlite3.connect(path, timeout=30)) as connection:
                connection.execute("PRAGMA query_only=ON")
                yield connection
        except sqlite3.Error as error:
            raise _one_line(error) from None
        return
    import psycopg  # only for Postgres: its import costs more than sqlite3's

    try:
        with psycopg.connect(_libpq_url(database_url), autocommit=True) as connection:
            yield connection
    except psycopg.Error as error:
        raise _one_line(error) from None


def status_counts(connection: Any) -> dict[str, int]:
    """Documents by the status of their latest version (`deleted` for deleted ones)."""
    return {str(status): int(count) for status, count in _rows(connection, STATUS_COUNTS)}


def recent_documents(connection: Any, limit: int = 20) -> list[RecentDocument]:
    """The documents changed last, newest first."""
    return [
        RecentDocument(_uuid(id_), _utc(updated_at), title, external_id, bool(hidden))
        for id_, updated_at, title, external_id, hidden in _rows(
            connection, RECENT_DOCUMENTS.format(limit=limit)
        )
    ]


def hidden_counts(connection: Any) -> tuple[int, int]:
    """Documents hidden from search, and single chunks of indexed versions hidden."""
    documents, chunks = _rows(connection, HIDDEN_COUNTS)[0]
    return int(documents), int(chunks)


def running_reindex(connection: Any) -> RunningReindex | None:
    """The batch re-index under way, if any (asked last: on a database from before
    migration 0009 the table is missing, and the answer is None)."""
    try:
        rows = _rows(connection, RUNNING_REINDEX)
    except Exception:  # the plain driver's own error class: no such table
        return None
    if not rows:
        return None
    collection, started_at, batch_tokens, sync_tokens, estimated, batches, read = rows[0]
    return RunningReindex(
        str(collection),
        _utc(started_at),
        int(batch_tokens),
        int(sync_tokens),
        int(estimated),
        int(batches),
        int(read),
    )


def _rows(connection: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor = connection.cursor()
    try:
        cursor.execute(sql)
        return list(cursor.fetchall())
    finally:
        cursor.close()


def _libpq_url(url: str) -> str:
    """`postgresql+psycopg://...` (SQLAlchemy's form) as libpq's `postgresql://...`."""
    scheme, rest = url.split("://", 1)
    if not scheme.startswith("postgres"):
        raise IngestError(f"unsupported DATABASE_URL scheme {scheme!r}", code="configuration")
    return "postgresql://" + rest


def _uuid(value: Any) -> uuid.UUID:
    """Postgres answers a UUID; SQLite stores SQLAlchemy's `Uuid` as 32 hex digits."""
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _utc(value: Any) -> datetime:
    """Postgres answers an aware datetime; SQLite a naive UTC string (`UTCDateTime`)."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _one_line(error: Exception) -> IngestError:
    text = " ".join(str(error).split())
    if "no such table" in text or type(error).__name__ == "UndefinedTable":
        return IngestError("the database has no schema: run `ingest db upgrade`.", code="no_schema")
    return IngestError(f"{type(error).__name__}: {text}", code="database")

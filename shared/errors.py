"""Typed failures. Each carries a stable `code` and a message a content editor can act on."""

from __future__ import annotations


class IngestError(Exception):
    """A failure that ends a version in `failed` (permanent) or is retried (transient)."""

    code: str = "internal_error"
    retryable: bool = False

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class PermanentError(IngestError):
    """Retrying cannot help: bad input, a refused request, a quota exhausted."""

    retryable = False


class TransientError(IngestError):
    """Worth another attempt later: a timeout, a 5xx, a service that is down."""

    code = "transient_error"
    retryable = True


class FrontMatterError(PermanentError):
    """Front matter the service will not expand: YAML anchors and aliases (a "billion laughs"
    of a few hundred bytes grows to billions of nodes), or a block too large or too deep."""

    code = "front_matter_refused"


class TooComplexError(PermanentError):
    """Chunking one document used up its CPU budget (`CHUNK_CPU_SECONDS`): failed at once,
    with a message, rather than a task killed at its time limit whose version then waits out
    its lease and is tried again, at the same cost, until it is marked stuck."""

    code = "too_complex"


class StoreError(TransientError):
    """The vector index could not be reached or refused a call: a Qdrant server down, or an
    embedded folder another process holds (`code` says which). Retryable: a pipeline step
    retries it; an HTTP route answers it as problem details (503), never a bare 500."""

    code = "index_unavailable"


class StoreLockedError(StoreError):
    """The embedded index folder (`QDRANT_PATH`) is held by another process: waiting helps
    only once that process stops, so it is not retried forever (`retryable` stays True for the
    reaper, which gives up after its attempts)."""

    code = "qdrant_locked"

"""OpenAI's Batch API through the SDK: upload a request file, create, read and cancel a batch,
stream an output file's lines. Control calls, not the hot path: the SDK's own retries do."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from shared.pipeline.embed.batch_files import ENDPOINT

#: A batch's states that end it (the others: validating, in_progress, finalizing, cancelling).
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class BatchState:
    id: str
    status: str
    output_file_id: str | None
    error_file_id: str | None
    completed: int
    failed: int
    errors: str | None  # why the API refused the file (status `failed`)


class BatchClient:
    def __init__(self, *, api_key: str | None, base_url: str | None, timeout: float = 120.0):
        import openai  # a second to import: not for a worker or command that never polls

        self._client = openai.OpenAI(
            api_key=api_key or "no-key", base_url=base_url, max_retries=3, timeout=timeout
        )

    def upload(self, filename: str, content: bytes) -> str:
        """`files.create(purpose="batch")`: the file's id."""
        created = self._client.files.create(
            file=(filename, content, "application/jsonl"), purpose="batch"
        )
        return created.id

    def create(self, input_file_id: str, metadata: dict[str, str]) -> BatchState:
        batch = self._client.batches.create(
            input_file_id=input_file_id,
            endpoint=ENDPOINT,
            completion_window="24h",
            metadata=metadata,
        )
        return _state(batch)

    def retrieve(self, batch_id: str) -> BatchState:
        return _state(self._client.batches.retrieve(batch_id))

    def cancel(self, batch_id: str) -> BatchState:
        return _state(self._client.batches.cancel(batch_id))

    def lines(self, file_id: str) -> Iterator[bytes]:
        """An output or error file's lines, streamed (50,000 vectors are hundreds of MB)."""
        with self._client.files.with_streaming_response.content(file_id) as response:
            for line in response.iter_lines():
                if line.strip():
                    yield line.encode()


def _state(batch: Any) -> BatchState:
    counts = batch.request_counts
    errors = None
    if batch.errors is not None and batch.errors.data:
        errors = "; ".join(
            f"line {e.line}: {e.message} ({e.code})" if e.line else f"{e.message} ({e.code})"
            for e in batch.errors.data
        )
    return BatchState(
        batch.id,
        batch.status,
        batch.output_file_id,
        batch.error_file_id,
        counts.completed if counts else 0,
        counts.failed if counts else 0,
        errors,
    )

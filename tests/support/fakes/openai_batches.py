"""The stand-in's `/v1/files` and `/v1/batches`: OpenAI's Batch API, for `/v1/embeddings`.

A batch moves one state each time it is read (`GET /v1/batches/{id}`): validating, in_progress,
finalizing, then its end; `hold()` keeps batches in_progress until `release()`. Its end is
`completed` unless a test scripted another for the next batch created (`next_outcomes`):
`failed` (with `errors`, as a file the API refuses), `expired` (half the lines answered, the
rest in the error file as `batch_expired`, as the API does), or `completed` with the first
`error_lines` lines answered 500 in the error file. Output lines come in shuffled order, as
the API promises no order. Each answer is what `POST /v1/embeddings` would answer.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.support.fakes.openai_rules import ApiError, answer, validate

#: The API's limits on one request file of embeddings.
MAX_FILE_REQUESTS = 50_000
MAX_FILE_INPUTS = 50_000
MAX_FILE_BYTES = 200 * 1024 * 1024
STEPS = ("validating", "in_progress", "finalizing")
ENDS = ("completed", "failed", "expired", "cancelled")


@dataclass
class Outcome:
    """How one batch ends: `completed`, `failed` or `expired`; `error_lines` of it fail."""

    end: str = "completed"
    error_lines: int = 0


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    outcome: Outcome
    metadata: dict[str, Any] | None
    status: str = "validating"
    created_at: int = field(default_factory=lambda: int(time.time()))
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(
        default_factory=lambda: {"total": 0, "completed": 0, "failed": 0}
    )
    reads: int = 0

    def body(self) -> dict[str, Any]:
        now = int(time.time())
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + 86_400,
            "completed_at": now if self.status == "completed" else None,
            "failed_at": now if self.status == "failed" else None,
            "expired_at": now if self.status == "expired" else None,
            "cancelled_at": now if self.status == "cancelled" else None,
            "request_counts": dict(self.counts),
            "metadata": self.metadata,
        }


class FakeBatches:
    """Files and batches, kept in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.files: dict[str, tuple[str, str, bytes]] = {}  # id: (filename, purpose, bytes)
        self.batches: dict[str, _Batch] = {}
        self.next_outcomes: list[Outcome] = []
        self.held = False
        self.cancelled: list[str] = []
        #: Downloads of an output or error file that break off halfway (the connection
        #: closed mid-body), as a network cut or a killed worker would leave a read.
        self.break_downloads = 0
        #: The next N `POST /v1/files` or `POST /v1/batches` answer 500 (by "files", "batches").
        self.refuse: dict[str, int] = {}
        #: While set, downloads wait (`stall_downloads`): a poll stuck mid-read, to be killed.
        self.stalled = 0
        self._flowing = threading.Event()
        self._flowing.set()

    # --- controls ----------------------------------------------------------------------------
    def hold(self) -> None:
        """Batches stay in_progress (a batch takes hours) until `release()`."""
        self.held = True

    def release(self) -> None:
        self.held = False

    def stall_downloads(self) -> None:
        """Downloads of output and error files wait until `resume_downloads()`."""
        self._flowing.clear()

    def resume_downloads(self) -> None:
        self._flowing.set()

    def wait_if_stalled(self) -> None:
        """Called by the server before a download: waits while downloads are stalled."""
        if not self._flowing.is_set():
            with self._lock:
                self.stalled += 1
            self._flowing.wait(timeout=120)

    def take_break(self) -> bool:
        """Whether this download breaks off (one of `break_downloads`)."""
        with self._lock:
            if self.break_downloads <= 0:
                return False
            self.break_downloads -= 1
            return True

    def uploads(self) -> list[bytes]:
        """The request files uploaded, in order."""
        with self._lock:
            return [data for _, purpose, data in self.files.values() if purpose == "batch"]

    # --- the API -----------------------------------------------------------------------------
    def route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        """(status, JSON body or bytes) for a request under /v1/files or /v1/batches."""
        parts = path.strip("/").split("/")[1:]  # without "v1"
        if method == "POST" and len(parts) == 1:
            with self._lock:
                refused = self.refuse.get(parts[0], 0) > 0
                if refused:
                    self.refuse[parts[0]] -= 1
            if refused:
                return 500, ApiError(500, "The server had an error.", "server_error").body
        try:
            if parts == ["files"] and method == "POST":
                return 200, self._upload(headers.get("content-type", ""), raw)
            if len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
                return 200, self._file(parts[1])[2]

            if len(parts) == 2 and parts[0] == "files" and method == "GET":
                name, purpose, data = self._file(parts[1])
                return 200, _file_body(parts[1], name, purpose, data)
            if parts == ["batches"] and method == "POST":
                return 200, self._create(json.loads(raw or b"{}"))
            if len(parts) == 2 and parts[0] == "batches" and method == "GET":
                return 200, self._read(parts[1])
            if len(parts) == 3 and parts[0] == "batches" and parts[2] == "cancel":
                return 200, self._cancel(parts[1])
        except ApiError as error:
            return error.status, error.body
        return 404, {"error": {"message": f"Unknown path {path}", "type": "invalid_request_error"}}

    def _file(self, file_id: str) -> tuple[str, str, bytes]:
        with self._lock:
            if file_id not in self.files:
                raise ApiError(404, f"No such File object: {file_id}", "invalid_request_error")
            return self.files[file_id]

    def _upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"content-type: {content_type}\r\n\r\n".encode() + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True)
            fields[str(name)] = (part.get_filename(), data if isinstance(data, bytes) else b"")
        if "file" not in fields or "purpose" not in fields:
            raise ApiError(400, "'file' and 'purpose' are required", "invalid_request_error")
        purpose = fields["purpose"][1].decode()
        filename, data = fields["file"]
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        with self._lock:
            self.files[file_id] = (filename or "upload", purpose, data)
        return _file_body(file_id, filename or "upload", purpose, data)

    def _create(self, body: dict[str, Any]) -> dict[str, Any]:
        file_id = body.get("input_file_id", "")
        _, purpose, _ = self._file(file_id)
        if purpose != "batch":
            raise ApiError(400, "The input file must have purpose 'batch'", "invalid_request_error")
        if body.get("completion_window") != "24h":
            raise ApiError(400, "completion_window must be 24h", "invalid_request_error")
        with self._lock:
            outcome = self.next_outcomes.pop(0) if self.next_outcomes else Outcome()
            batch = _Batch(
                f"batch_{uuid.uuid4().hex[:24]}",
                file_id,
                str(body.get("endpoint")),
                outcome,
                body.get("metadata"),
            )
            self.batches[batch.id] = batch
            return batch.body()

    def _read(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batch(batch_id)
            batch.reads += 1
            if batch.status == "cancelling":
                batch.status = "cancelled"
            elif batch.status in STEPS and not (self.held and batch.status == "in_progress"):
                position = STEPS.index(batch.status)
                if position + 1 < len(STEPS):
                    batch.status = STEPS[position + 1]
                else:
                    self._finish(batch)
            return batch.body()

    def _cancel(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batch(batch_id)
            if batch.status in ENDS:
                raise ApiError(
                    400, f"Cannot cancel a batch with status {batch.status}", "invalid_request"
                )
            batch.status = "cancelling"
            self.cancelled.append(batch_id)
            return batch.body()

    def _batch(self, batch_id: str) -> _Batch:
        if batch_id not in self.batches:
            raise ApiError(404, f"No batch found with id '{batch_id}'.", "invalid_request_error")
        return self.batches[batch_id]

    def _finish(self, batch: _Batch) -> None:
        """The batch's end: its output and error files, as the API writes them."""
        lines = [line.decode() for line in self.files[batch.input_file_id][2].split(b"\n")]
        problems = _check_file(lines, batch.endpoint, len(self.files[batch.input_file_id][2]))
        if batch.outcome.end == "failed" or problems:
            batch.status = "failed"
            batch.errors = problems or [
                {"code": "invalid_request", "message": "The batch could not be run.", "line": 1}
            ]
            return
        requests = [json.loads(line) for line in lines if line.strip()]
        answered = len(requests) // 2 if batch.outcome.end == "expired" else len(requests)
        output, errors = [], []
        for number, request in enumerate(requests):
            custom_id = request["custom_id"]
            if number >= answered:
                error = {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion "
                    "window expired.",
                }
                errors.append(_line(custom_id, None, error))
            elif number < batch.outcome.error_lines:
                failure = ApiError(500, "The server had an error.", "server_error")
                errors.append(_line(custom_id, (500, failure.body), None))
            else:
                try:
                    inputs, counts, model, dimensions, fmt = validate(request["body"])
                except ApiError as refused:
                    errors.append(_line(custom_id, (refused.status, refused.body), None))
                    continue
                reply = answer(inputs, model, dimensions, fmt, sum(counts), False)
                output.append(_line(custom_id, (200, reply), None))
        random.shuffle(output)  # the API keeps no order: lines are joined on custom_id
        batch.counts = {
            "total": len(requests),
            "completed": len(output),
            "failed": len(errors),
        }
        if output:
            batch.output_file_id = self._store(f"{batch.id}_output.jsonl", output)
        if errors:
            batch.error_file_id = self._store(f"{batch.id}_error.jsonl", errors)
        batch.status = "expired" if batch.outcome.end == "expired" else "completed"

    def _store(self, name: str, lines: list[dict[str, Any]]) -> str:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        self.files[file_id] = (name, "batch_output", data)
        return file_id


def _check_file(lines: list[str], endpoint: str, size: int) -> list[dict[str, Any]]:
    """What the API's validation refuses in a request file."""
    problems: list[dict[str, Any]] = []
    if size > MAX_FILE_BYTES:
        problems.append({"code": "file_too_large", "message": "File is over 200 MB.", "line": None})
    seen: set[str] = set()
    inputs = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            custom_id, body = request["custom_id"], request["body"]
        except (ValueError, KeyError, TypeError):
            problems.append(
                {"code": "invalid_json_line", "message": "Invalid line", "line": number}
            )
            continue
        if custom_id in seen:
            problems.append(
                {"code": "duplicate_custom_id", "message": "Duplicate custom_id", "line": number}
            )
        seen.add(custom_id)
        if request.get("method") != "POST" or request.get("url") != endpoint:
            problems.append(
                {"code": "mismatched_endpoint", "message": "URL must match", "line": number}
            )
        given = body.get("input") if isinstance(body, dict) else None
        inputs += len(given) if isinstance(given, list) else 1
    if len(seen) > MAX_FILE_REQUESTS or inputs > MAX_FILE_INPUTS:
        problems.append(
            {
                "code": "too_many_requests",
                "message": "Over 50,000 inputs in one file.",
                "line": None,
            }
        )
    return problems


def _line(
    custom_id: str, response: tuple[int, Any] | None, error: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
        "custom_id": custom_id,
        "response": None
        if response is None
        else {
            "status_code": response[0],
            "request_id": uuid.uuid4().hex,
            "body": response[1],
        },
        "error": error,
    }


def _file_body(file_id: str, filename: str, purpose: str, data: bytes) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(data),
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": purpose,
        "status": "processed",
    }

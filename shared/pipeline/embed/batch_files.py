"""Batch API request files and their answers, as pure functions (no database, no network).

A re-index through OpenAI's Batch API writes its inputs as JSONL request files, one line a
`POST /v1/embeddings` request (`custom_id`, `model`, `input` list, `dimensions`), at most
`max_file_inputs` inputs (the API takes 50,000 embedding inputs a file) and `MAX_FILE_BYTES`
a file. The answers come back as lines in any order, joined on `custom_id`.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import orjson

from shared.pipeline.embed.base import pack_batches

ENDPOINT: Final = "/v1/embeddings"
#: The API takes files up to 200 MB; a margin for the last line.
MAX_FILE_BYTES = 190 * 1024 * 1024


#: Characters JSON leaves unescaped that some line readers take for line ends (U+0085,
#: U+2028, U+2029; Python's `str.splitlines`): escaped, so one request is one line anywhere.
_LINE_BREAKS = [
    (char.encode(), f"\\u{ord(char):04x}".encode()) for char in ("\u0085", "\u2028", "\u2029")
]


@dataclass(frozen=True)
class Input:
    """One text to embed and the chunks (ids) it is the embedding input of."""

    text: str
    chunk_ids: list[int]
    tokens: int


@dataclass(frozen=True)
class Request:
    custom_id: str
    inputs: list[Input]
    line: bytes

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.inputs)


@dataclass(frozen=True)
class RequestFile:
    number: int
    requests: list[Request]

    @property
    def inputs(self) -> int:
        return sum(len(r.inputs) for r in self.requests)

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.requests)

    def content(self) -> bytes:
        return b"".join(r.line for r in self.requests)


def request_line(custom_id: str, model: str, dimensions: int | None, texts: list[str]) -> bytes:
    """One JSONL line: the body `POST /v1/embeddings` would take (vectors as base64: 4 bytes a
    float in the output file instead of about 20)."""
    body: dict[str, object] = {"model": model, "input": texts, "encoding_format": "base64"}
    if dimensions is not None:
        body["dimensions"] = dimensions
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    encoded = orjson.dumps(line)
    for raw, escaped in _LINE_BREAKS:
        encoded = encoded.replace(raw, escaped)
    return encoded + b"\n"


def request_files(
    inputs: Sequence[Input],
    model: str,
    dimensions: int | None,
    *,
    max_request_inputs: int,
    max_request_tokens: int,
    max_file_inputs: int,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> list[RequestFile]:
    """The inputs in full requests (the synchronous API's limits), the requests in files of at
    most `max_file_inputs` inputs and `max_file_bytes`. `custom_id`s are `r<n>`, unique."""
    per_request = min(max_request_inputs, max_file_inputs)
    ranges = pack_batches([i.tokens for i in inputs], per_request, max_request_tokens)
    files: list[RequestFile] = []
    current: list[Request] = []
    count = size = 0
    for number, span in enumerate(ranges):
        group = [inputs[i] for i in span]
        custom_id = f"r{number}"
        line = request_line(custom_id, model, dimensions, [i.text for i in group])
        if current and (count + len(group) > max_file_inputs or size + len(line) > max_file_bytes):
            files.append(RequestFile(len(files), current))
            current, count, size = [], 0, 0
        current.append(Request(custom_id, group, line))
        count += len(group)
        size += len(line)
    if current:
        files.append(RequestFile(len(files), current))
    return files


@dataclass(frozen=True)
class Answer:
    """One line of an output or error file: the vectors (None: the request failed, `error`
    says why) and the tokens it was billed."""

    custom_id: str
    vectors: list[list[float]] | None
    tokens: int
    error: str | None = None


def read_line(raw: bytes, dimensions: int) -> Answer:
    """Read one output or error line; a line that is not an answer raises ValueError."""
    line = orjson.loads(raw)
    custom_id = str(line["custom_id"])
    response = line.get("response") or {}
    error = line.get("error")
    status = response.get("status_code")
    body = response.get("body") or {}
    if error or status != 200:
        message = (error or {}).get("message") or (body.get("error") or {}).get("message")
        return Answer(custom_id, None, 0, f"{status or 'no answer'}: {message or 'failed'}")
    data = sorted(body["data"], key=lambda item: item["index"])
    vectors = [_vector(item["embedding"]) for item in data]
    if any(len(vector) != dimensions for vector in vectors):
        return Answer(custom_id, None, 0, f"vectors not of {dimensions} dimensions")
    usage = body.get("usage") or {}
    return Answer(custom_id, vectors, int(usage.get("total_tokens") or 0))


def _vector(embedding: Any) -> list[float]:
    """One embedding: base64 of little-endian float32 (as asked), or a JSON list of floats."""
    if isinstance(embedding, str):
        vector: list[float] = np.frombuffer(base64.b64decode(embedding), dtype="<f4").tolist()
        return vector
    return [float(value) for value in embedding]

"""What the stand-in checks and answers, as the OpenAI embeddings API does.

Kept apart from the HTTP plumbing in `openai_server.py`: the limits and their 400s, the error
bodies, the deterministic vectors and the `usage` of an answer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from typing import Any

import numpy as np

MODELS = {
    "text-embedding-3-large": 3072,
    "text-embedding-3-small": 1536,
    "text-embedding-ada-002": 1536,
}
MAX_INPUTS = 2048
MAX_INPUT_TOKENS = 8192
MAX_REQUEST_TOKENS = 300_000
# Limits reported when no budget is enforced: large, so a client's limiter never waits on them.


class ApiError(Exception):
    """An answer other than 200, shaped like the API's error body."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str,
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
        self.type = type_
        self.headers = headers or {}


def vector_for(text: str | list[int], dimensions: int, model: str = "text-embedding-3-large"):
    """The deterministic unit vector the stand-in answers for one input (float32 array)."""
    raw = json.dumps(text) if isinstance(text, list) else text
    seed = int.from_bytes(hashlib.blake2b(f"{model}\n{raw}".encode(), digest_size=8).digest())
    full = np.random.default_rng(seed).standard_normal(MODELS.get(model, dimensions))
    vector = full[:dimensions].astype(np.float32)  # shortened like text-embedding-3, then
    return vector / np.linalg.norm(vector)  # normalised again


def _bad(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, "invalid_request_error", code, param)


def parse_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        raise _bad("We could not parse the JSON body of your request.") from None
    if not isinstance(body, dict):
        raise _bad("We could not parse the JSON body of your request.")
    return body


def validate(body: dict[str, Any]) -> tuple[list[Any], list[int], str, int, str]:
    """Check a request as the API does; returns inputs, their token counts, model, dims, format."""
    from shared.tokens import encode_all

    model = body.get("model")
    if not model:
        raise _bad("you must provide a model parameter")
    if model not in MODELS:
        raise ApiError(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        )
    if "input" not in body:
        raise _bad("'input' is a required property")
    raw = body["input"]
    single = isinstance(raw, str) or (isinstance(raw, list) and raw and isinstance(raw[0], int))
    inputs = [raw] if single else raw
    well_typed = isinstance(inputs, list) and all(
        isinstance(item, str) or (isinstance(item, list) and all(isinstance(i, int) for i in item))
        for item in inputs
    )
    if not well_typed or not inputs:
        raise _bad(
            "'$.input' is invalid. Please check the API reference: "
            "https://platform.openai.com/docs/api-reference."
        )
    if len(inputs) > MAX_INPUTS:
        raise _bad(
            f"Invalid 'input': array too long. Expected an array with maximum length "
            f"{MAX_INPUTS}, but got an array with length {len(inputs)} instead.",
            "input",
            "array_above_max_length",
        )
    if any(item == "" or item == [] for item in inputs):
        raise _bad(
            "'$.input' is invalid. Please check the API reference: "
            "https://platform.openai.com/docs/api-reference."
        )
    texts = [item for item in inputs if isinstance(item, str)]
    counted = iter(encode_all(texts))
    counts = [len(next(counted)) if isinstance(item, str) else len(item) for item in inputs]
    for count in counts:
        if count > MAX_INPUT_TOKENS:
            raise _bad(
                f"This model's maximum context length is {MAX_INPUT_TOKENS} tokens, "
                f"however you requested {count} tokens ({count} in your prompt; 0 for "
                "the completion). Please reduce your prompt; or completion length."
            )
    if sum(counts) > MAX_REQUEST_TOKENS:
        raise _bad(
            f"Requested {sum(counts)} tokens, max {MAX_REQUEST_TOKENS} tokens per request",
            code="max_tokens_per_request",
        )
    native = MODELS[model]
    dimensions = body.get("dimensions", native)
    if "dimensions" in body and not model.startswith("text-embedding-3"):
        raise _bad("This model does not support specifying dimensions.", "dimensions")
    if not isinstance(dimensions, int) or not 1 <= dimensions <= native:
        raise _bad(
            f"Invalid value for 'dimensions' = {dimensions}. Must be between 1 and {native}.",
            "dimensions",
            "invalid_value",
        )
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise _bad(
            f"Invalid value for 'encoding_format': {fmt!r}. Supported values are: "
            "'float' and 'base64'.",
            "encoding_format",
            "invalid_value",
        )
    return inputs, counts, model, dimensions, fmt


def answer(
    inputs: list[Any], model: str, dimensions: int, fmt: str, tokens: int, shuffle: bool
) -> dict[str, Any]:
    data = []
    for index, item in enumerate(inputs):
        vector = vector_for(item, dimensions, model)
        if fmt == "base64":
            embedding: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode()
        else:
            embedding = vector.tolist()
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    if shuffle:
        random.shuffle(data)
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }

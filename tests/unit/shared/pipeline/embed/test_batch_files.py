"""Batch API request files: the API's limits kept, every input once, answers read back."""

from __future__ import annotations

import base64

import numpy as np
import orjson

from shared.pipeline.embed.batch_files import Input, read_line, request_files


def inputs(count: int, tokens: int = 10) -> list[Input]:
    return [Input(f"text {n}", [n, n + 1000], tokens) for n in range(count)]


def test_files_hold_at_most_the_inputs_and_bytes_allowed_and_every_input_once() -> None:
    files = request_files(
        inputs(23),
        "text-embedding-3-small",
        256,
        max_request_inputs=4,
        max_request_tokens=1000,
        max_file_inputs=10,
    )
    assert [f.inputs for f in files] == [8, 8, 7]  # whole requests of 4 in files of 10
    sent = [orjson.loads(line) for f in files for line in f.content().splitlines()]
    assert [text for line in sent for text in line["body"]["input"]] == [
        f"text {n}" for n in range(23)
    ]
    assert len({line["custom_id"] for line in sent}) == len(sent)
    assert all(line["body"]["dimensions"] == 256 for line in sent)

    by_size = request_files(
        inputs(23),
        "text-embedding-ada-002",
        None,
        max_request_inputs=4,
        max_request_tokens=1000,
        max_file_inputs=50_000,
        max_file_bytes=400,
    )
    assert all(len(f.content()) <= 400 for f in by_size) and len(by_size) > 1
    assert all(
        "dimensions" not in orjson.loads(f.content().splitlines()[0])["body"] for f in by_size
    )


def test_requests_keep_the_token_limit() -> None:
    files = request_files(
        inputs(10, tokens=300),
        "text-embedding-3-small",
        256,
        max_request_inputs=2048,
        max_request_tokens=1000,
        max_file_inputs=50_000,
    )
    assert [len(r.inputs) for r in files[0].requests] == [3, 3, 3, 1]


def test_an_answer_and_a_failed_line_are_read() -> None:
    vectors = [np.full(4, 0.5, dtype="<f4"), np.full(4, -0.5, dtype="<f4")]
    data = [
        {"index": 1, "embedding": base64.b64encode(vectors[1].tobytes()).decode()},
        {"index": 0, "embedding": vectors[0].tolist()},
    ]
    body = {"data": data, "usage": {"total_tokens": 12}}
    ok = read_line(
        orjson.dumps({"custom_id": "r3", "response": {"status_code": 200, "body": body}}), 4
    )
    assert ok.custom_id == "r3" and ok.tokens == 12 and ok.error is None
    assert ok.vectors == [[0.5] * 4, [-0.5] * 4]  # in input order, whatever the data order
    wrong_size = read_line(
        orjson.dumps({"custom_id": "r3", "response": {"status_code": 200, "body": body}}), 8
    )
    assert wrong_size.vectors is None
    expired = read_line(
        orjson.dumps(
            {
                "custom_id": "r4",
                "response": None,
                "error": {"code": "batch_expired", "message": "x"},
            }
        ),
        4,
    )
    assert expired.vectors is None and expired.error and "x" in expired.error


def test_a_text_with_unicode_line_separators_stays_one_line() -> None:
    text = "Eerste regel\u2028tweede\u2029derde\u0085vierde\nvijfde"
    (request_file,) = request_files(
        [Input(text, [1], 12)],
        "text-embedding-3-small",
        256,
        max_request_inputs=2048,
        max_request_tokens=300_000,
        max_file_inputs=50_000,
    )
    content = request_file.content().decode()
    assert len(content.splitlines()) == 1  # even for a reader that splits on U+2028
    assert orjson.loads(content)["body"]["input"] == [text]

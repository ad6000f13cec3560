"""The chunker's cost grows linearly with its input, whatever the shape,
and a document over its CPU budget fails `too_complex` instead of running on.

The linearity test is a ratio, not an absolute time: each shape is chunked at a small and an
sixteen times larger size (the thread's CPU time, best of three, so that a busy neighbour on
the machine does not decide), and the time may grow at most twice as much as the size.
Before the fix tables, code blocks, one long paragraph, long words and CJK text grew
quadratically (overlap rescanned the whole block for every chunk; tiktoken's merge of one
long piece); `bench/chunk_shapes.py` measures the same shapes up to 4 MB.
"""

from __future__ import annotations

import time

import pytest

from shared.errors import TooComplexError
from shared.pipeline.chunk import ChunkSettings, chunk_markdown
from shared.pipeline.chunk.doc_tokens import _WINDOW, encode
from shared.tokens import encoding
from tests.support.chunk_shapes import SHAPES

SMALL, LARGE = 20_000, 320_000


def _best_time(text: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        began = time.thread_time()
        chunk_markdown(text)
        best = min(best, time.thread_time() - began)
    return best


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_chunking_time_grows_linearly_with_the_size(shape: str) -> None:
    make = SHAPES[shape]
    chunk_markdown(make(2_000))  # warm-up: vocabulary, regexes, caches
    small, large = make(SMALL), make(LARGE)
    ratio = _best_time(large) / max(_best_time(small), 1e-3)
    size_ratio = len(large) / len(small)
    assert ratio < 2 * size_ratio, f"{shape}: x{ratio:.1f} time for x{size_ratio:g} size"


@pytest.mark.parametrize("shape", ["cjk", "long_word"])
def test_runs_without_spaces_longer_than_a_window_still_give_exact_counts(shape: str) -> None:
    text = SHAPES[shape](3 * _WINDOW)
    chunks = chunk_markdown(text)
    enc = encoding()
    assert chunks and all(c.token_count == len(enc.encode_ordinary(c.text)) for c in chunks)
    assert max(c.token_count for c in chunks) <= ChunkSettings().max_tokens
    assert "".join(c.new_text for c in chunks) == "".join(
        text[c.char_start : c.char_end] for c in chunks
    )


def test_windowed_encoding_equals_one_encode_for_text_with_seams() -> None:
    enc = encoding()
    for shape in ("prose", "paragraph", "table", "code", "list", "nesting"):
        text = SHAPES[shape](3 * _WINDOW)
        assert list(encode(text)) == enc.encode_ordinary(text), shape


def test_a_document_over_its_cpu_budget_fails_too_complex() -> None:
    text = SHAPES["table"](400_000)
    with pytest.raises(TooComplexError) as refused:
        chunk_markdown(text, ChunkSettings(cpu_seconds=0.05))
    assert refused.value.code == "too_complex" and refused.value.retryable is False
    assert "0.05 seconds" in refused.value.message
    assert chunk_markdown(SHAPES["prose"](20_000), ChunkSettings(cpu_seconds=30))  # in budget

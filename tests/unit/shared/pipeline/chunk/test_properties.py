"""Properties of the chunker on generated Markdown and on every page of the test corpus."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.pipeline.chunk import ChunkSettings, chunk_markdown
from tests.support.chunks import (
    check_chunks,
    markdown_documents,
)
from tests.support.paths import CORPUS_PAGES

CORPUS_FILES = CORPUS_PAGES
SMALL = ChunkSettings(target_tokens=90, max_tokens=120, overlap_tokens=25, min_tokens=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown_documents())
def test_generated_markdown_keeps_the_invariants(text: str) -> None:
    check_chunks(text, chunk_markdown(text))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown_documents(), st.booleans())
def test_generated_markdown_with_small_chunks_keeps_the_invariants(text: str, pack: bool) -> None:
    small = replace(SMALL, pack_sections=pack)
    check_chunks(text, chunk_markdown(text, small), small)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown_documents(), st.sampled_from(["section", "h1", "document"]))
def test_same_input_same_output(text: str, scope: str) -> None:
    chunk_settings = ChunkSettings(overlap_scope=scope)
    assert chunk_markdown(text, chunk_settings) == chunk_markdown(text, chunk_settings)


def test_corpus_is_there() -> None:
    assert len(CORPUS_FILES) == 48


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_file_keeps_the_invariants(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    chunks = chunk_markdown(text)
    check_chunks(text, chunks)
    assert chunks == chunk_markdown(text)
    small = chunk_markdown(text, SMALL)
    check_chunks(text, small, SMALL)

"""Properties of the chunker on generated Markdown and on every page of the test corpus."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.pipeline.chunk import ChunkSettings, chunk_markdown
from tests.conftest import CORPUS_PAGES
from tests.support.chunks import check_chunks

CORPUS_FILES = CORPUS_PAGES
SMALL = ChunkSettings(target_tokens=90, max_tokens=120, overlap_tokens=25, min_tokens=20)

_word = st.one_of(
    st.sampled_from(["knie", "operatie", "één", "naïef", "coördinatie", "patient", "the", "a"]),
    st.sampled_from(["手術", "患者さん", "🦵", "🙂", "#tag", "`code`", "**bold**", "x|y"]),
    st.text(alphabet="abcdefghij.,!?:;-'\"é\u00a0", min_size=1, max_size=12),
)
_sentence = st.lists(_word, min_size=1, max_size=40).map(" ".join)
_paragraph = st.lists(_sentence, min_size=1, max_size=12).map(
    lambda sentences: ". ".join(sentences)
)
_code_line = st.one_of(
    st.sampled_from(["# comment", "## not a heading", "```", "~~~", "\tindented\u00a0x", ""]),
    _sentence,
)


@st.composite
def _fenced(draw: st.DrawFn) -> str:
    marker = draw(st.sampled_from(["```", "~~~", "````"]))
    language = draw(st.sampled_from(["", "python", "js"]))
    lines = draw(st.lists(_code_line, max_size=60))
    lines = [line for line in lines if not line.startswith(marker[0] * 3)]
    closed = draw(st.booleans())
    return f"{marker}{language}\n" + "\n".join(lines) + (f"\n{marker}" if closed else "")


@st.composite
def _table(draw: st.DrawFn) -> str:
    columns = draw(st.integers(1, 4))
    rows = draw(st.lists(st.lists(_sentence, min_size=columns, max_size=columns), max_size=40))
    head = "| " + " | ".join(f"h{i}" for i in range(columns)) + " |"
    delimiter = "|" + "---|" * columns
    body = ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
    return "\n".join([head, delimiter, *body])


_heading = st.builds(lambda level, title: "#" * level + " " + title, st.integers(1, 6), _sentence)
_setext = st.builds(lambda title, mark: f"{title}\n{mark}", _sentence, st.sampled_from("=-"))
_list = st.lists(_sentence, min_size=1, max_size=30).map(
    lambda items: "\n".join(f"- {item}" for item in items)
)
_quote = st.lists(_sentence, min_size=1, max_size=10).map(
    lambda lines: "\n".join(f"> {line}" for line in lines)
)
_admonition = st.builds(
    lambda kind, inner: f":::{kind} Title\n" + "\n\n".join(inner) + "\n:::",
    st.sampled_from(["tip", "note", "danger"]),
    st.lists(st.one_of(_paragraph, _list, _fenced()), min_size=1, max_size=6),
)
_block = st.one_of(
    _paragraph,
    _paragraph,
    _heading,
    _heading,
    _setext,
    _fenced(),
    _table(),
    _list,
    _quote,
    _admonition,
    st.just("<!-- # comment -->"),
    st.just("[ref]: https://example.org"),
    st.just("    ## indented code"),
)


@st.composite
def markdown_documents(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(_block, max_size=25))
    front = draw(st.sampled_from(["", "---\ntitle: T\n---\n", "---\nunclosed\n"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = front + "\n\n".join(blocks)
    return text.replace("\n", newline)


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

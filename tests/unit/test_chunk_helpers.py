"""Checks shared by the chunker tests (no tests here): the invariants every chunking keeps."""

from __future__ import annotations

import re

from shared.pipeline.chunk import Chunk, ChunkSettings, front_matter, normalise
from shared.pipeline.chunk.markdown_blocks import scan_blocks
from shared.tokens import count_tokens

_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")


def fences_balanced(text: str) -> bool:
    """Every fenced code block mistune finds in `text` ends with its own closing fence."""
    for block in scan_blocks(text):
        if block.kind != "code":
            continue
        lines = text[block.start : block.end].split("\n")
        opened = _OPEN.match(lines[0])
        if not opened:
            continue  # indented code
        marker = opened.group(1)
        closer = re.compile(r" {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}[ \t]*")
        if len(lines) < 2 or not closer.fullmatch(lines[-1]):
            return False
    return True


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check_chunks(text: str, chunks: list[Chunk], settings: ChunkSettings | None = None) -> None:
    """No chunk over the maximum, nothing lost, exact offsets, balanced fences."""
    settings = settings or ChunkSettings()
    source = normalise(text)
    _, body_start = front_matter(source)
    position = body_start
    for number, chunk in enumerate(chunks):
        assert chunk.index == number
        assert chunk.token_count == count_tokens(chunk.text)
        assert chunk.token_count <= settings.max_tokens
        assert chunk.new_text == source[chunk.char_start : chunk.char_end]
        assert chunk.char_start >= position, "chunks overlap in the source or go backwards"
        assert not source[position : chunk.char_start].strip(), "text lost between chunks"
        assert chunk.new_text.strip(), "a chunk without text of its own"
        assert fences_balanced(chunk.text), chunk.text
        position = chunk.char_end
    assert not source[position:].strip(), "text lost at the end"
    joined = "".join(chunk.new_text for chunk in chunks)
    assert squash(joined) == squash(source[body_start:])

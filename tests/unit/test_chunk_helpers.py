"""Checks shared by the chunker tests (no tests here): the invariants every chunking keeps."""

from __future__ import annotations

import re
from itertools import pairwise

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


def heading_paths(source: str, body_start: int) -> set[tuple[str, ...]]:
    """Every heading path of the document (the empty path for text before any heading)."""
    paths: set[tuple[str, ...]] = {()}
    stack: list[tuple[int, str]] = []
    for block in scan_blocks(source, body_start):
        if block.kind == "heading":
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            if block.title:
                stack.append((block.level, block.title))
            paths.add(tuple(title for _, title in stack))
    return paths


def check_sections(chunk: Chunk, paths: set[tuple[str, ...]]) -> None:
    """`sections` slice the whole chunk text in order, name the document's own heading
    paths, and the one holding the chunk's own text start is `headings`."""
    sections = chunk.sections
    assert sections and sections[0]["char_start"] == 0
    assert sections[-1]["char_end"] == len(chunk.text)
    for before, after in pairwise(sections):
        assert before["char_end"] == after["char_start"]
        assert before["headings"] != after["headings"]
    for section in sections:
        assert section["char_start"] < section["char_end"]
        assert tuple(section["headings"]) in paths, section
    own = [s for s in sections if s["char_start"] <= chunk.new_text_offset < s["char_end"]]
    assert own and own[0]["headings"] == chunk.headings


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check_chunks(text: str, chunks: list[Chunk], settings: ChunkSettings | None = None) -> None:
    """No chunk over the maximum, nothing lost, exact offsets, balanced fences, true sections."""
    settings = settings or ChunkSettings()
    source = normalise(text)
    _, body_start = front_matter(source)
    position = body_start
    paths = heading_paths(source, body_start)
    for number, chunk in enumerate(chunks):
        assert chunk.index == number
        assert chunk.token_count == count_tokens(chunk.text)
        assert chunk.token_count <= settings.max_tokens
        assert chunk.new_text == source[chunk.char_start : chunk.char_end]
        assert chunk.char_start >= position, "chunks overlap in the source or go backwards"
        assert not source[position : chunk.char_start].strip(), "text lost between chunks"
        assert chunk.new_text.strip(), "a chunk without text of its own"
        assert fences_balanced(chunk.text), chunk.text
        check_sections(chunk, paths)
        position = chunk.char_end
    assert not source[position:].strip(), "text lost at the end"
    joined = "".join(chunk.new_text for chunk in chunks)
    assert squash(joined) == squash(source[body_start:])

"""Checks shared by the chunker tests (no tests here): the invariants every chunking keeps."""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import strategies as st

from shared.pipeline.chunk import Chunk, ChunkSettings, chunk_markdown, front_matter, normalise
from shared.pipeline.chunk.markdown_blocks import Block, scan_blocks
from shared.pipeline.chunk.split import containers, line_starts
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


_SENTENCE_END = re.compile(r"[.!?…:;。！？][\"'”’»)\]*_]*\s*$")
_ITEM = re.compile(r" *(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)")


def overlap_start(source: str, previous: Chunk, chunk: Chunk) -> tuple[int, str]:
    """Where in the source the overlap of `chunk` starts (the earliest start whose text to
    the end of the previous chunk is in `chunk`'s lead), and what the lead repeats in front
    of it (fence or admonition openers, a table's header and delimiter rows)."""
    lead = chunk.text[: chunk.new_text_offset]
    end = previous.char_end
    matches = []
    for start in range(max(previous.char_start, end - 3000), end):
        body = source[start:end]
        found = lead.find(body) if body.strip() and body[0] != "\n" else -1
        while found > 0 and lead[found - 1] != "\n":  # the structure in front is whole lines
            found = lead.find(body, found + 1)
        if found >= 0:
            matches.append((start, lead[:found]))
    assert matches, f"overlap not found in the previous chunk: {lead[:200]!r}"
    for start, structure in matches:  # structure lines can look like source (```` vs ```)
        if start == 0 or source[start - 1].isspace() or source[start - 1] in "。！？":
            return start, structure
    return matches[0]


def check_overlap_starts(source: str, chunks: list[Chunk], settings: ChunkSettings) -> int:
    """Every overlap starts at a row (behind its table's header), a whole code line, or a
    word; returns how many start mid-sentence although a sentence start lay in the window."""
    blocks = scan_blocks(source)
    mid_sentence = 0
    for previous, chunk in pairwise(chunks):
        if not chunk.overlap_tokens:
            continue
        start, structure = overlap_start(source, previous, chunk)
        block = next(b for b in blocks if b.start <= start < b.end)
        line_start = start == 0 or source[start - 1] == "\n"
        if block.kind == "table":
            assert line_start, "overlap starts inside a table row"
            first_row = source.find("\n", source.find("\n", block.start) + 1) + 1
            assert start == block.start or (start >= first_row and structure), "rows lack header"
        elif block.kind == "code" or structure.lstrip().startswith(("```", "~~~")):
            assert line_start, "overlap starts inside a code line"
        else:
            word_start = source[start - 1].isspace() or source[start - 1] in "。！？"
            assert start == block.start or word_start, "starts inside a word"
            full_budget = (  # else the maximum made the overlap shrink: another window
                chunk.token_count - chunk.overlap_tokens + settings.overlap_tokens + 8
                <= settings.max_tokens
            )
            if full_budget and not _sentence_start(blocks, source, start):
                window = source[previous.char_start : previous.char_end]
                tail = window[-settings.overlap_tokens * 8 :]
                offset = previous.char_end - len(tail)
                closer = previous.text[previous.new_text_offset + len(previous.new_text) :]
                for pos in range(len(tail)):
                    if not _sentence_start(blocks, source, offset + pos):
                        continue
                    same_block = block.start <= offset + pos < block.end
                    tokens = count_tokens((structure if same_block else "") + tail[pos:] + closer)
                    if settings.overlap_tokens * 6 // 7 <= tokens <= settings.overlap_tokens:
                        mid_sentence += 1
                        break
    return mid_sentence


def _in_fence(source: str, block: Block, pos: int) -> bool:
    """Inside a fenced code block nested in a list, quote or admonition (code, not prose)."""
    if block.kind in ("code", "table", "text", "heading"):
        return False
    for fence in containers(source, line_starts(source, block.start, block.end), block.end):
        is_fence = fence.opener.lstrip()[:3] in ("```", "~~~")
        if is_fence and fence.open_start < pos and (fence.close_start or len(source)) >= pos:
            return True
    return False


def _sentence_start(blocks: list[Block], source: str, pos: int) -> bool:
    """A block start, a list item start, or after . ! ? … : ; (and closing marks) and a space."""
    block = next((b for b in blocks if b.start <= pos < b.end), None)
    if block is not None and pos == block.start:
        return True
    if block is None or _in_fence(source, block, pos):
        return False
    if block.kind == "list" and source[pos - 1] == "\n" and _ITEM.match(source, pos):
        return True
    if source[pos].isspace():
        return False
    if source[pos - 1] in "。！？":
        return True
    if not source[pos - 1].isspace():
        return False
    return bool(_SENTENCE_END.search(source[max(block.start, pos - 8) : pos]))


def ends_with_heading(source: str, chunk: Chunk, blocks: list[Block], limit: int) -> bool:
    """Whether the chunk's own text ends with headings of the document (of at most `limit`
    tokens together: headings longer than a quarter chunk may stay where they are)."""
    inside = [b for b in blocks if b.start < chunk.char_end and b.end > chunk.char_start]
    trailing = 0
    while trailing < len(inside) and inside[-1 - trailing].kind == "heading":
        trailing += 1
    if not trailing:
        return False
    return count_tokens(source[inside[-trailing].start : inside[-1].end]) <= limit


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check_chunks(text: str, chunks: list[Chunk], settings: ChunkSettings | None = None) -> None:
    """No chunk over the maximum, nothing lost, exact offsets, balanced fences, true sections."""
    settings = settings or ChunkSettings()
    source = normalise(text)
    _, body_start = front_matter(source)
    position = body_start
    paths = heading_paths(source, body_start)
    blocks = scan_blocks(source, body_start)
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
        if number < len(chunks) - 1:
            orphan = ends_with_heading(source, chunk, blocks, settings.max_tokens // 4)
            assert not orphan, "a heading whose text is in the next chunk"
        position = chunk.char_end
    assert not source[position:].strip(), "text lost at the end"
    joined = "".join(chunk.new_text for chunk in chunks)
    assert squash(joined) == squash(source[body_start:])
    assert check_overlap_starts(source, chunks, settings) == 0, "overlap starts mid-sentence"


def prose(tokens: int, seed: int = 0, punctuation: bool = True) -> str:
    """A paragraph of about `tokens` tokens (one word is about one token)."""
    words = [WORDS[(seed + i * 7) % len(WORDS)] for i in range(tokens)]
    if punctuation:
        for i in range(11, len(words), 12):
            words[i] += "."
    return " ".join(words).capitalize() + ("." if punctuation else "")


def chunks_of(text: str, settings: ChunkSettings | None = None) -> list[Chunk]:
    chunks = chunk_markdown(text, settings)
    check_chunks(text, chunks, settings)
    return chunks


@st.composite
def markdown_documents(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(_block, max_size=25))
    front = draw(st.sampled_from(["", "---\ntitle: T\n---\n", "---\nunclosed\n"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = front + "\n\n".join(blocks)
    return text.replace("\n", newline)


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


WORDS = [
    *[
        "patients",
        "should",
        "bring",
        "their",
        "identity",
        "card",
        "insurance",
        "details",
        "and",
        "a",
        "list",
        "of",
    ],
    *[
        "medicines",
        "when",
        "they",
        "come",
        "to",
        "the",
        "hospital",
        "for",
        "the",
        "knee",
        "operation",
        "and",
        "the",
        "nurse",
    ],
]

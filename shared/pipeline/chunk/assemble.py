"""Assembling the final chunks: drafts from the packer, overlap, measured counts, metadata.

`chunk_markdown(text)` is a pure function. Offsets (`char_start`, `char_end`) refer to the
*normalised* text: BOM stripped, CRLF and CR turned into LF (`normalise`), which is what
`shared.pipeline.convert` produces anyway. For every chunk,
`normalise(text)[char_start:char_end]` is its new text, found in `chunk.text` at
`new_text_offset`; around it `text` may carry the overlap taken from the previous chunk and
the structure repeated from a split block (a reopened code fence, a table's header rows).

Rules, in order of precedence: the maximum (overlap included) is never exceeded; no chunk ends
with a heading whose text is in the next one; a block that fits in the maximum is never split
(unless only so can its heading go with it); overlap is 60-70 tokens where the block after it
leaves room (a block close to the maximum gets less, or none), starting cleanly (`overlap`).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from shared.pipeline.chunk import sections
from shared.pipeline.chunk.budget import check, cpu_budget
from shared.pipeline.chunk.doc_tokens import DocTokens, warm_up
from shared.pipeline.chunk.markdown_blocks import Block, normalise, scan_blocks
from shared.pipeline.chunk.model import Chunk, ChunkSettings
from shared.pipeline.chunk.overlap import NONE, take_overlap
from shared.pipeline.chunk.packing import Draft, Packer
from shared.pipeline.chunk.token_sums import joined_tokens
from shared.pipeline.front_matter import front_matter
from shared.tokens import encoding

__all__ = ["Chunk", "ChunkSettings", "chunk_markdown", "front_matter", "normalise"]


def chunk_markdown(text: str, settings: ChunkSettings | None = None) -> list[Chunk]:
    """Cut a Markdown document into chunks (see the module docstring for the guarantees)."""
    settings = settings or ChunkSettings()
    warm_up()  # once per process: not this document's cost
    with cpu_budget(settings.cpu_seconds):
        source = normalise(text)
        metadata, body_start = front_matter(source)
        blocks = scan_blocks(source, body_start)
        if not blocks:
            return []
        packer = Packer(source, blocks, settings)
        return _assemble(source, packer, metadata, settings)


def _assemble(
    source: str, packer: Packer, metadata: dict[str, Any], settings: ChunkSettings
) -> list[Chunk]:
    """Final texts: overlap, measured token counts, metadata."""
    blocks = packer.blocks
    chunks: list[Chunk] = []
    previous: Draft | None = None
    previous_offset = 0  # where the previous chunk's own text starts in its text
    previous_spans: list[sections.Span] = []
    pending = deque(packer.drafts())
    while pending:
        check()
        draft = pending.popleft()
        core = draft.prefix + source[draft.start : draft.end] + draft.suffix
        budget = settings.overlap_tokens if _gets_overlap(previous, draft, settings, packer) else 0
        while True:
            overlap = NONE
            if previous is not None and budget > 0:
                overlap = take_overlap(source, blocks, packer.doc, previous, draft, budget)
            if overlap.inside:
                assert previous is not None
                gap = source[previous.end : draft.start]
                lead = ""
                text = draft.prefix + overlap.text + gap + core[len(draft.prefix) :]
                offset = len(draft.prefix) + len(overlap.text) + len(gap)
                count = len(encoding().encode_ordinary(text))
            else:
                separator = _separator(source, previous, draft) if overlap.text else ""
                lead = overlap.text + separator
                text = lead + core
                offset = len(lead) + len(draft.prefix)
                lead_count = overlap.tokens + joined_tokens(overlap.text, separator) if lead else 0
                count = _count(lead, lead_count, core, draft, packer.doc)
            if count <= settings.max_tokens or not overlap.text:
                break
            budget = overlap.tokens - (count - settings.max_tokens) - 1
        if count > settings.max_tokens:  # an estimate was off: cut this draft smaller
            pending.extendleft(reversed(packer.smaller(draft)))
            continue
        spans = sections.own_spans(
            blocks, packer.paths, draft, len(lead), offset - draft.start, len(text)
        )
        if lead and previous is not None:
            begin = previous_offset + overlap.start - previous.start
            before = sections.overlap_spans(previous_spans, begin, overlap.structure, len(lead))
            spans = sections.join(before, spans)
        chunks.append(
            _chunk(len(chunks), text, count, draft, blocks, metadata, overlap.tokens, offset, spans)
        )
        previous, previous_offset, previous_spans = draft, offset, spans
    return chunks


def _count(lead: str, lead_count: int, core: str, draft: Draft, doc: DocTokens) -> int:
    """Tokens of `lead + core`, from the document's tokens where that is exact (a lead ending
    in a newline before a non-space character is a seam)."""
    plain = not draft.prefix and not draft.suffix
    if plain and (not lead or (lead[-1] == "\n" and not core[0].isspace())):
        return doc.count(draft.start, draft.end) + lead_count
    return len(encoding().encode_ordinary(lead + core))


def _gets_overlap(
    previous: Draft | None, draft: Draft, settings: ChunkSettings, packer: Packer
) -> bool:
    """Whether the draft may begin with the previous chunk's end (`overlap_scope`)."""
    if previous is None or settings.overlap_tokens <= 0:
        return False
    if settings.overlap_scope == "document":
        return True
    if settings.overlap_scope == "h1":
        return previous.last_section == draft.first_section
    first = packer.blocks[draft.first]
    starts_section = first.kind == "heading" and draft.start == first.start
    return not starts_section and packer.paths[previous.last] == packer.paths[draft.first]


def _separator(source: str, previous: Draft | None, draft: Draft) -> str:
    """The original whitespace between the two chunks' texts, at most a blank line."""
    if previous is None or previous.suffix or draft.prefix:
        return "\n\n"
    gap = source[previous.end : draft.start]
    if gap.count("\n") >= 2:
        return "\n\n"
    return gap if gap.isspace() or not gap else "\n\n"


def _chunk(
    index: int,
    text: str,
    token_count: int,
    draft: Draft,
    blocks: list[Block],
    metadata: dict[str, Any],
    overlap_tokens: int,
    new_text_offset: int,
    spans: list[sections.Span],
) -> Chunk:
    inside = blocks[draft.first : draft.last + 1]
    kinds: list[str] = []
    languages: list[str] = []
    admonitions: list[str] = []
    for block in inside:
        kinds.extend((block.kind, *block.inner_kinds))
        languages.extend(block.languages)
        admonitions.extend(block.admonitions)
    path = draft.heading_path
    return Chunk(
        index=index,
        text=text,
        token_count=token_count,
        headings=[title for _, title in path],
        heading=path[-1][1] if path else None,
        heading_level=path[-1][0] if path else None,
        kinds=list(dict.fromkeys(kinds)),
        code_languages=list(dict.fromkeys(languages)),
        admonition_types=list(dict.fromkeys(admonitions)),
        char_start=draft.start,
        char_end=draft.end,
        overlap_tokens=overlap_tokens,
        new_text_offset=new_text_offset,
        sections=sections.as_dicts(spans),
        metadata=metadata,  # one dict shared by every chunk: up to 64 KB of front matter
    )

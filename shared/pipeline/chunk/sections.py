"""Which sections a chunk's text covers, with their character ranges in the chunk (`sections`).

A chunk may hold the end of one section (its overlap), a whole small section and the start of
the next. `headings` names only where the chunk's own text starts; `sections` names them all,
so a citation can name the section where a hit's text lies. The ranges cover the chunk text
from 0 to its end without gaps, in order; a section that is only a heading counts as part of
the section after it (its title is in that section's path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.pipeline.chunk.markdown_blocks import Block
from shared.pipeline.chunk.packing import Draft, HeadingPath


@dataclass(slots=True)
class Span:
    """Part of a chunk's text that lies in one section (made and adjusted here only)."""

    path: tuple[str, ...]
    start: int
    end: int
    content: bool = True  # False: only headings (merged into the span after it)


def own_spans(
    blocks: list[Block],
    paths: list[HeadingPath],
    draft: Draft,
    lead: int,
    origin: int,
    length: int,
) -> list[Span]:
    """Spans of a draft's part of a chunk text of `length`: from `lead` (the end of an overlap
    in front) on, source position `p` being at `origin + p`; repeated structure belongs to the
    span it is in."""
    spans: list[Span] = []
    for index in range(draft.first, draft.last + 1):
        block = blocks[index]
        is_heading = block.kind == "heading"
        if index == draft.first or is_heading:
            start = lead if index == draft.first else origin + block.start
            if spans:
                spans[-1].end = start
            titles = tuple(title for _, title in paths[index])
            spans.append(Span(titles, start, length, content=not is_heading))
        else:
            spans[-1].content = True
    return _tidy(spans)


def overlap_spans(previous: list[Span], begin: int, opener: int, lead: int) -> list[Span]:
    """Spans of an overlap copied from `previous_text[begin:]` behind `opener` characters of
    repeated structure, the whole lead (overlap and separator) being `lead` characters."""
    shift = opener - begin
    spans = [
        Span(span.path, max(span.start + shift, 0), span.end + shift)
        for span in previous
        if span.end > begin
    ]
    if spans:
        spans[0].start = 0
        spans[-1].end = lead
    return spans


def _tidy(spans: list[Span]) -> list[Span]:
    """Heading-only spans join the span after them; neighbours in one section become one."""
    tidy: list[Span] = []
    carried: int | None = None
    for number, span in enumerate(spans):
        if not span.content and number < len(spans) - 1:
            carried = span.start if carried is None else carried
            continue
        if carried is not None:
            span.start, carried = carried, None
        if tidy and tidy[-1].path == span.path:
            tidy[-1].end = span.end
        else:
            tidy.append(span)
    return tidy


def join(lead: list[Span], own: list[Span]) -> list[Span]:
    """The overlap's spans, then the draft's own (one span where the section continues)."""
    if lead and own and lead[-1].path == own[0].path:
        lead[-1].end = own[0].end
        return [*lead, *own[1:]]
    return [*lead, *own]


def as_dicts(spans: list[Span]) -> list[dict[str, Any]]:
    return [
        {"headings": list(span.path), "char_start": span.start, "char_end": span.end}
        for span in spans
    ]

"""Where in a chunk the hit's passage lies, so its citation names that passage's section and
page, not the chunk's majority section or first page ("De operatie duurt ongeveer een uur."
was cited as "Herstel thuis", the section most of its chunk was about).

Offsets: `sections` ranges are in the chunk's `text` (overlap included); `pages` are
`[offset, page]` pairs in the chunk's own text (`char_start` = 0), written by the pipeline
(`indexing.page_marks`); a chunk indexed before them has `page_start` only.
"""

from __future__ import annotations

import re
from typing import Any

_WORDS = 12  # enough to place a sentence; fewer than a cut preview keeps


def own_text(payload: dict[str, Any]) -> str:
    """`text` without the overlap taken from the previous chunk (payload offsets)."""
    text = str(payload.get("text") or "")
    start, end = payload.get("char_start"), payload.get("char_end")
    if start is None or end is None:
        return text
    offset = int(payload.get("new_text_offset") or 0)
    return text[offset : offset + int(end) - int(start)] or text


def locate(own: str, passage: str) -> int | None:
    """Offset in `own` where `passage` (a preview: wrapped lines joined, list marker and the
    ellipsis of a cut left off) starts, or None when it is not found as written."""
    words = passage.removesuffix("…").split()[:_WORDS]
    if not words:
        return None
    found = re.search(r"\s+".join(re.escape(word) for word in words), own)
    return found.start() if found else None


def section_at(payload: dict[str, Any], at: int) -> list[str] | None:
    """The heading path of the section holding own-text offset `at`, or None if unknown."""
    position = int(payload.get("new_text_offset") or 0) + at
    for section in payload.get("sections") or []:
        if int(section.get("char_start", 0)) <= position < int(section.get("char_end", 0)):
            return list(section.get("headings") or [])
    return None


def page_at(payload: dict[str, Any], at: int) -> int | None:
    """The page holding own-text offset `at`: the last page mark at or before it."""
    page = None
    for offset, number in payload.get("pages") or []:
        if int(offset) > at:
            break
        page = int(number)
    return page

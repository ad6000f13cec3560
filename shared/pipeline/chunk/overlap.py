"""Overlap: each chunk may begin with about the last N tokens of the chunk before it.

The overlap starts at a word boundary (never inside a UTF-8 character) and never leaves a
code fence or an admonition half-open: when it starts inside one, the opening line is
repeated in front of it, so every chunk stays balanced Markdown.
"""

from __future__ import annotations

import re

from shared.pipeline.chunk.split import containers, line_starts
from shared.tokens import encoding

_WORD_GAP = re.compile(r"\s+")


def overlap_text(
    previous: str, previous_tokens: list[int], budget: int
) -> tuple[str, int, int]:
    """About the last `budget` tokens of `previous` (at most `budget`), their token count, and
    where in `previous` the copied tail starts (the text may begin with a repeated opener)."""
    if budget <= 0 or not previous_tokens:
        return "", 0, len(previous)
    enc = encoding()
    tail = enc.decode_bytes(previous_tokens[-budget:])
    skip = 0
    while skip < len(tail) and 0x80 <= tail[skip] < 0xC0:  # a character cut in two
        skip += 1
    start = _word_start(previous, len(previous) - len(tail[skip:].decode("utf-8")))
    start = _line_start(previous, start, budget)
    while start < len(previous):
        opener, begin = _structure_at(previous, start)
        text = opener + previous[begin:]
        count = len(enc.encode_ordinary(text))
        if count <= budget:
            return (text, count, begin) if text.strip() else ("", 0, len(previous))
        start = _next_word(previous, begin)
    return "", 0, len(previous)


def _word_start(text: str, pos: int) -> int:
    """`pos` if a word starts there, else the start of the next word (or `pos` if none)."""
    if pos <= 0:
        return 0
    if text[pos - 1].isspace() and pos < len(text) and not text[pos].isspace():
        return pos
    gap = _WORD_GAP.search(text, pos)
    if gap is None or gap.end() >= len(text):
        return pos  # one word longer than the budget: cut at a character boundary
    return gap.end()


def _line_start(text: str, start: int, budget: int) -> int:
    """Begin at a whole line instead (code, table rows) if that keeps 60 of 70 tokens."""
    if start == 0 or text[start - 1] == "\n":
        return start
    newline = text.find("\n", start, len(text) - 1)
    if newline < 0:
        return start
    kept = len(encoding().encode_ordinary(text[newline + 1 :]))
    return newline + 1 if kept >= budget * 6 // 7 else start


def _next_word(text: str, pos: int) -> int:
    gap = _WORD_GAP.search(text, pos + 1)
    return len(text) if gap is None else gap.end()


def _structure_at(text: str, start: int) -> tuple[str, int]:
    """Opening lines of the fences/admonitions open at `start`, and the adjusted start."""
    if "```" not in text and "~~~" not in text and ":::" not in text:
        return "", start
    found = containers(text, line_starts(text, 0, len(text)), len(text))
    for container in found:
        if container.open_start < start <= container.open_end:
            start = min(container.open_end + 1, len(text))  # not from the middle of an opener
        if container.close_start is not None and container.close_start < start:
            close_end = text.find("\n", container.close_start)
            if close_end < 0 or start <= close_end:
                start = len(text) if close_end < 0 else close_end + 1
    openers = [
        c.opener + "\n"
        for c in found
        if c.open_end < start and (c.close_start is None or start <= c.close_start)
    ]
    return "".join(openers), start

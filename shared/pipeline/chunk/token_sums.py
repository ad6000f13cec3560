"""Exact token counts of joined texts without encoding them again.

cl100k_base first splits text with a regex and then encodes each piece on its own, so
`encode(u + v) == encode(u) + encode(v)` whenever no piece can cross the seam. That holds at
three kinds of position `p` (checked against every branch of the pattern, and by a test):

- after a newline, before a non-space character (`"...\\n" | "Word"`): pieces that hold a
  newline end at one, and none of them goes on into a following non-space character;
- after a non-space character, before an ASCII space (`"word" | " next"`): no piece holds a
  non-space character followed by a space;
- after an ASCII letter or digit, before ASCII punctuation or whitespace (`"word" | ".\n"`):
  letter and digit pieces end there (used by `block_tail`).

The chunker encodes every block once; with the seams above, the final count of a chunk made
of whole blocks is the sum of its blocks plus what each gap between them adds, which costs
two small encodes per distinct (tail, gap) instead of a second encode of the whole text.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

from shared.tokens import encoding

_SEAM = re.compile(r"(?<=\S) |(?<=\n)\S")
_PUNCTUATION = frozenset(string.punctuation)
_ALNUM = frozenset(string.ascii_letters + string.digits)


def is_seam(text: str, pos: int) -> bool:
    """Whether tokens of `text[:pos]` and `text[pos:]` add up to those of `text`."""
    if pos <= 0 or pos >= len(text):
        return True
    before, after = text[pos - 1], text[pos]
    if before == "\n":
        return not after.isspace()
    return after == " " and not before.isspace()


def last_seam(text: str, start: int, end: int) -> int:
    """The last seam strictly inside `text[start:end]`, or `start` when there is none."""
    space = text.rfind(" ", start + 1, end)
    while space > start and text[space - 1].isspace():
        space = text.rfind(" ", start + 1, space)
    newline = text.rfind("\n", start, end - 1)
    while newline >= start and text[newline + 1].isspace():
        newline = text.rfind("\n", start, newline)
    return max(space, newline + 1 if newline >= start else start, start)


def block_tail(text: str, start: int, end: int) -> int:
    """Where the last piece of `text[start:end]` that a following newline may join starts.

    Usually the block ends in a word and at most some ASCII punctuation: an ASCII letter or
    digit followed by punctuation or a newline is a seam as well (no piece runs on from a
    letter or digit into either), so the tail is just that punctuation.
    """
    pos = end
    while pos > start and text[pos - 1] in _PUNCTUATION:
        pos -= 1
    if pos > start and text[pos - 1] in _ALNUM:
        return pos
    return last_seam(text, start, end)


@lru_cache(maxsize=4096)
def _gap_tokens(tail: str, gap: str) -> int:
    """Tokens a gap adds after a block ending in `tail` (the gap is followed by a seam)."""
    enc = encoding()
    return len(enc.encode_ordinary(tail + gap)) - len(enc.encode_ordinary(tail))


def tail_tokens(text: str, count: int) -> list[int]:
    """The last `count` tokens of `encode(text)` (all if fewer), encoding only a tail of it."""
    enc = encoding()
    window = max(count * 6, 64)
    while True:
        if window >= len(text):
            tokens = enc.encode_ordinary(text)
            return tokens[-count:] if count else []
        match = _SEAM.search(text, len(text) - window)
        if match is not None and match.start() > 0:
            tokens = enc.encode_ordinary(text[match.start() :])
            if len(tokens) >= count:
                return tokens[-count:] if count else []
        window *= 2


def joined_tokens(text: str, gap: str) -> int:
    """Tokens `gap` (whitespace) adds after `text`: `count(text + gap) - count(text)`."""
    return _gap_tokens(text[block_tail(text, 0, len(text)) :], gap)


class JoinedCounts:
    """Exact counts of `source[blocks[first].start : blocks[last].end]` from block counts."""

    def __init__(self, source: str, spans: list[tuple[int, int]], counts: list[int]) -> None:
        self.source = source
        self.spans = spans
        self.counts = counts
        self._gaps: dict[int, int | None] = {}

    def span(self, first: int, last: int) -> int | None:
        """Tokens of the blocks first..last with the source between them; None: not additive."""
        total = sum(self.counts[first : last + 1])
        for index in range(first, last):
            if index not in self._gaps:
                self._gaps[index] = self._gap(index)
            extra = self._gaps[index]
            if extra is None:
                return None
            total += extra
        return total

    def _gap(self, index: int) -> int | None:
        """Tokens the gap after block `index` adds, or None when the next block is no seam."""
        source = self.source
        start, end = self.spans[index]
        following = self.spans[index + 1][0]
        gap = source[end:following]
        if not gap.isspace() or not is_seam(source, following):
            return None
        return _gap_tokens(source[block_tail(source, start, end) : end], gap)

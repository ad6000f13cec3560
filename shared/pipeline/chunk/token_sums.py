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

`doc_tokens` uses these seams to read the tokens of any slice of a document from one encode
of the whole; `joined_tokens` counts what a gap adds after an overlap with two small,
cached encodes.
"""

from __future__ import annotations

import string
from functools import lru_cache

from shared.tokens import encoding

_PUNCTUATION = frozenset(string.punctuation)
_ALNUM = frozenset(string.ascii_letters + string.digits)
_ASCII_SPACE = frozenset(string.whitespace)


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


def tail_seam(text: str, start: int, end: int) -> int:
    """The last seam of `text` in `[start, end]` (`start` when there is none): `end` itself
    when the text after it starts no piece that runs back, else as in `block_tail` for the
    character that really follows."""
    if end >= len(text) or is_seam(text, end):
        return end
    pos = end
    while pos > start and text[pos - 1] in _PUNCTUATION:
        pos -= 1
    # After an ASCII letter or digit, the next piece must start no letter or digit run.
    ends_word = pos < end or text[end] in _PUNCTUATION or text[end] in _ASCII_SPACE
    if ends_word and pos > start and text[pos - 1] in _ALNUM:
        return pos
    return last_seam(text, start, end)


@lru_cache(maxsize=4096)
def _gap_tokens(tail: str, gap: str) -> int:
    """Tokens a gap adds after a block ending in `tail` (the gap is followed by a seam)."""
    enc = encoding()
    return len(enc.encode_ordinary(tail + gap)) - len(enc.encode_ordinary(tail))


def joined_tokens(text: str, gap: str) -> int:
    """Tokens `gap` (whitespace) adds after `text`: `count(text + gap) - count(text)`."""
    return _gap_tokens(text[block_tail(text, 0, len(text)) :], gap)

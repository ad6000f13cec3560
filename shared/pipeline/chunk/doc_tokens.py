"""Exact tokens of any slice of a document from one encode of the whole document.

The chunker needs the tokens or counts of many slices of one document: every block, every
overlap candidate, the tail of every chunk. cl100k_base encodes regex pieces on their own,
and no piece crosses a seam (`token_sums`), so between two seams the tokens of a slice are
the document's own tokens there. A slice is then its head up to its first seam (a word or
an indentation, encoded alone and cached), the document's tokens between its first and last
seam, and its tail after the last seam (usually some punctuation, cached likewise); a slice
without seams inside is encoded whole.

tiktoken's byte-pair merge grows faster than linearly with the length of one regex piece,
and text without spaces or line breaks (CJK, base64, a pasted URL) is one piece: a 1 MB run
took minutes. `encode` therefore encodes text over `_WINDOW` characters in windows cut at
seams (exact: the same tokens as one encode); only a run of more than half a window without
any seam is cut at the window's end, where its tokens may differ from tiktoken's by a token
or two. Such a run holds more tokens than any chunk may (a token is at most 128 bytes), so
it is always split, and every chunk's final text is still measured on its own.

Token positions are counted in characters: the tokens' characters are their bytes other than
UTF-8 continuation bytes, so one table per vocabulary and one `accumulate` per document give
the character where each token starts (a token opening inside a character belongs to it).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from itertools import accumulate

from shared.pipeline.chunk.token_sums import is_seam, last_seam, tail_seam
from shared.tokens import encoding

# A seam after a non-space character before a space, or after a newline before a non-space.
_SEAM = re.compile(r"(?<=\S) |(?<=\n)\S")
_SHORT = 48  # pieces up to this many characters are encoded once per process (cached)
_WINDOW = 65_536  # longer texts are encoded in windows (over 450 tokens: 128 bytes a token)
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[list[int], list[bool], list[int]]:
    """Per token: the characters it starts, whether it opens inside a character, its bytes."""
    enc = encoding()
    starts: list[int] = []
    inside: list[bool] = []
    sizes: list[int] = []
    for token in range(enc.max_token_value + 1):
        try:
            raw = enc.decode_single_token_bytes(token)
        except KeyError:  # a gap in the vocabulary: never produced
            raw = b""
        starts.append(len(raw.translate(None, _CONTINUATION_BYTES)))
        inside.append(bool(raw) and 0x80 <= raw[0] < 0xC0)
        sizes.append(len(raw))
    return starts, inside, sizes


def warm_up() -> None:
    """Load the vocabulary and its tables (once per process, a few tenths of a second): the
    first document a worker chunks should not pay for them out of its CPU budget."""
    _vocabulary()


@lru_cache(maxsize=8192)
def _encode_short(text: str) -> tuple[int, ...]:
    return tuple(encoding().encode_ordinary(text))


def encode(text: str) -> list[int] | tuple[int, ...]:
    """`encode_ordinary(text)`, cached for short texts (heads, tails, repeated structure)."""
    if len(text) <= _SHORT:
        return _encode_short(text)
    if len(text) <= _WINDOW:
        return encoding().encode_ordinary(text)
    return _encode_windows(text)


def _encode_windows(text: str) -> list[int]:
    """`encode_ordinary(text)` window by window, each cut at the last seam in its second
    half, or at its end when that half has none (see the module docstring)."""
    enc = encoding()
    tokens: list[int] = []
    pos, size = 0, len(text)
    while size - pos > _WINDOW:
        low, high = pos + _WINDOW // 2, pos + _WINDOW
        cut = last_seam(text, low, high)
        if cut == low and not is_seam(text, low):
            cut = high  # a run without seams: cut it (inexact only here)
        tokens.extend(enc.encode_ordinary(text[pos:cut]))
        pos = cut
    tokens.extend(enc.encode_ordinary(text[pos:]))
    return tokens


def _starts_of(text: str, origin: int) -> list[int]:
    """tiktoken's `decode_with_offsets` offsets of `encode(text)` plus `origin`, from the
    vocabulary's table (a token opening inside a character counts from that character)."""
    starts, inside, _ = _vocabulary()
    tokens = encode(text)
    chars = accumulate(map(starts.__getitem__, tokens), initial=origin)
    # `chars` ends with one more entry (where the text ends): zip stops at the tokens.
    return [char - inside[token] for char, token in zip(chars, tokens, strict=False)]


class DocTokens:
    """One encode of `source[origin:]` (the body: front matter is never chunked);
    `tokens(start, end)` equals `encode(source[start:end])` for `origin <= start <= end`."""

    def __init__(self, source: str, origin: int = 0) -> None:
        self.source = source
        self.origin = origin
        tokens = encode(source[origin:])
        self.all = tokens if isinstance(tokens, list) else list(tokens)
        starts, self._inside, self._sizes = _vocabulary()
        self.chars = list(accumulate(map(starts.__getitem__, self.all), initial=origin))
        # Should the characters not add up (text tiktoken had to repair), encode each slice.
        self.mapped = self.chars[-1] == len(source)

    def tokens(self, start: int, end: int) -> list[int]:
        """The tokens of `source[start:end]`."""
        parts = self._parts(start, end)
        if parts is None:
            return list(encode(self.source[start:end]))
        head, first, last, tail = parts
        return [*encode(head), *self.all[first:last], *encode(tail)]

    def count(self, start: int, end: int) -> int:
        """How many tokens `source[start:end]` has."""
        parts = self._parts(start, end)
        if parts is None:
            return len(encode(self.source[start:end]))
        head, first, last, tail = parts
        total = last - first
        if head:
            total += len(encode(head))
        if tail:
            total += len(encode(tail))
        return total

    def counts(self, spans: list[tuple[int, int]]) -> list[int]:
        """`[self.count(start, end) for start, end in spans]` in one loop: the packer counts
        every block of the document, and per block the calls of `count` added up."""
        source, origin = self.source, self.origin
        if not self.mapped:
            return [len(encode(source[start:end])) for start, end in spans]
        index, search = self._index, _SEAM.search
        counts: list[int] = []
        for start, end in spans:
            if end - start <= _SHORT:
                counts.append(len(encode(source[start:end])))
                continue
            middle_end = tail_seam(source, start, end)
            middle_start: int | None = start
            if start != origin and not is_seam(source, start):
                found = search(source, start + 1, middle_end)
                middle_start = None if found is None else found.start()
            if middle_start is None or middle_end < middle_start:
                counts.append(len(encode(source[start:end])))
                continue
            first, last = index(middle_start), index(middle_end)
            if first is None or last is None:
                counts.append(len(encode(source[start:end])))
                continue
            total = last - first
            if middle_start > start:
                total += len(encode(source[start:middle_start]))
            if middle_end < end:
                total += len(encode(source[middle_end:end]))
            counts.append(total)
        return counts

    def last_tokens(self, start: int, end: int, count: int) -> list[int]:
        """The last `count` tokens of `source[start:end]` (all if fewer)."""
        if count <= 0:
            return []
        parts = self._parts(start, end)
        if parts is None:
            return list(encode(self.source[start:end])[-count:])
        head, first, last, tail = parts
        tail_tokens = encode(tail)
        needed = count - len(tail_tokens)
        if needed <= 0:
            return list(tail_tokens[-count:])
        if last - first >= needed:
            return [*self.all[last - needed : last], *tail_tokens]
        return [*encode(head), *self.all[first:last], *tail_tokens][-count:]

    def token_starts(self, start: int, end: int) -> list[int]:
        """Where each token of `source[start:end]` starts, as tiktoken's `decode_with_offsets`
        gives it (plus `start`): a token opening inside a character counts from it."""
        parts = self._parts(start, end)
        if parts is None:
            return _starts_of(self.source[start:end], start)
        head, first, last, tail = parts
        inside = self._inside
        middle = zip(self.chars[first:last], self.all[first:last], strict=True)
        return [
            *_starts_of(head, start),
            *[char - inside[token] for char, token in middle],
            *_starts_of(tail, end - len(tail)),
        ]

    def byte_length(self, tokens: list[int]) -> int:
        """`len(decode_bytes(tokens))` without decoding."""
        return sum(map(self._sizes.__getitem__, tokens))

    def _parts(self, start: int, end: int) -> tuple[str, int, int, str] | None:
        """(head, first, last, tail): `source[start:end]` is `head`, the document's tokens
        `first:last`, then `tail`, split at seams; None when there are no two seams."""
        source = self.source
        if not self.mapped or end - start <= _SHORT:
            return None
        middle_end = tail_seam(source, start, end)
        if start == self.origin or is_seam(source, start):
            middle_start = start
        else:
            found = _SEAM.search(source, start + 1, middle_end)
            if found is None:
                return None
            middle_start = found.start()
        if middle_end < middle_start:
            return None
        first = self._index(middle_start)
        last = self._index(middle_end)
        if first is None or last is None:
            return None  # not a token boundary: cannot happen at a seam, but never guess
        return source[start:middle_start], first, last, source[middle_end:end]

    def _index(self, pos: int) -> int | None:
        """The index of the token that starts at character `pos`, or None."""
        size = len(self.all)
        if pos >= len(self.source):
            return size
        chars, tokens, inside = self.chars, self.all, self._inside
        index = bisect_left(chars, pos)
        while index < size and chars[index] == pos:
            if not inside[tokens[index]]:
                return index
            index += 1  # a token that finishes the character before `pos`
        return None

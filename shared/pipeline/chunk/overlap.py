"""Overlap: a chunk may begin with about the last N tokens of the chunk before it (rule 5).

It has to read cleanly, or it pushes the answer down the chunk and starts it mid-thought:

- it starts where a sentence starts, if one lies in the window of the last 60-70 tokens
  (block, list item and heading starts count), else where a word starts;
- never inside a table row or a code line: in code it takes whole lines (indentation kept; a
  fenced block gets its opening line, language and all, in front), in a table whole body rows
  behind the repeated header and delimiter rows, or no rows at all;
- when the chunk continues the same split code block or table, the overlap lines go after the
  structure the chunk repeats (one fence, one header), not in a block of their own.

Where no clean start lies in the window, the first clean start after it is taken: a shorter
overlap rather than a broken one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from shared.pipeline.chunk.doc_tokens import DocTokens, encode
from shared.pipeline.chunk.markdown_blocks import FENCE_LINE, Block
from shared.pipeline.chunk.packing import Draft
from shared.pipeline.chunk.split import Container, containers, line_starts
from shared.tokens import encoding

# A sentence starts after . ! ? … : ; (closing quotes, brackets or emphasis marks allowed).
_SENTENCE_START = re.compile(r"[.!?…:;]+[\"'”’»)\]*_]*\s+(?=\S)|[。！？]+(?=\S)")
_WORD_START = re.compile(r"\s+(?=\S)")
_LIST_ITEM = re.compile(r" *(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)")

Start = tuple[int, str]  # (source position, structure repeated in front of it)
Nested = Callable[[Block], "list[Container]"]
# Each block's containers, found once per document (keyed by its `DocTokens`): every chunk cut
# from one huge block looks them up, and finding them again each time would be quadratic.
_CONTAINERS: WeakKeyDictionary[DocTokens, dict[Block, list[Container]]] = WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class Overlap:
    """`text` = repeated structure + `source[start:previous end]` + the previous closer."""

    text: str = ""
    tokens: int = 0
    start: int = 0  # source position where the copied text starts
    structure: int = 0  # characters of repeated structure in front of it
    inside: bool = False  # continues the draft's own split block: goes after its prefix


NONE = Overlap()


def take_overlap(
    source: str,
    blocks: list[Block],
    doc: DocTokens,
    previous: Draft,
    draft: Draft,
    budget: int,
) -> Overlap:
    """About the last `budget` tokens of `previous`'s own text (never more), cleanly started:
    a clean start giving 6/7 of the budget or more, else a word start that does, else the
    longest clean start that fits. `doc` counts slices of the document."""
    if budget <= 0 or previous.end <= previous.start:
        return NONE
    enc = encoding()
    tail = doc.byte_length(doc.last_tokens(previous.start, previous.end, budget + 2))
    begin = max(previous.start, previous.end - tail)  # chars <= bytes: covers the tail
    body_start = _continued_body(source, blocks, previous, draft)
    nested = _nested_of(source, doc)
    low = max(budget * 6 // 7, 1)
    measured: dict[int, Overlap] = {}

    def measure(candidate: Start) -> Overlap:
        start, structure = candidate
        if start not in measured:
            body = source[start : previous.end]
            inside = body_start is not None
            text = body if inside else structure + body + previous.suffix
            if inside or (not structure and not previous.suffix):
                count = doc.count(start, previous.end)
            elif not previous.suffix and structure[-1] == "\n" and not body[0].isspace():
                count = len(encode(structure)) + doc.count(start, previous.end)  # at a seam
            else:
                count = len(enc.encode_ordinary(text))
            measured[start] = Overlap(text, count, start, 0 if inside else len(structure), inside)
        return measured[start]

    def first_fitting(candidates: list[Start]) -> Overlap | None:
        """The earliest start whose overlap fits (counts fall as the start moves on): a guess
        from the bytes per token of the tail, then a step or two to the exact one."""
        if not candidates:
            return None
        per_token = max(tail, 1) / (budget + 2)
        # The first candidate whose bytes suggest it fits (byte counts fall as the start
        # moves on, so a binary search finds it), or the last one.
        index, high = 0, len(candidates) - 1
        while index < high:
            middle = (index + high) // 2
            if len(source[candidates[middle][0] : previous.end].encode()) / per_token > budget:
                index = middle + 1
            else:
                high = middle
        while index > 0 and measure(candidates[index - 1]).tokens <= budget:
            index -= 1
        while index < len(candidates) and measure(candidates[index]).tokens > budget:
            index += 1
        return measure(candidates[index]) if index < len(candidates) else None

    # Where the previous chunk's last non-blank character ends: a start before it is not blank.
    ink = previous.start + len(source[previous.start : previous.end].rstrip())
    lowest = previous.start if body_start is None else max(body_start, previous.start)

    def usable(candidates: list[Start]) -> list[Start]:
        """Not blank; in a continued table or code block only its own rows or lines."""
        return [candidate for candidate in candidates if lowest <= candidate[0] < ink]

    clean = first_fitting(usable(_candidates(source, blocks, previous, begin, nested, words=False)))
    if clean is not None and clean.tokens >= low:
        return clean
    word = first_fitting(usable(_candidates(source, blocks, previous, begin, nested, words=True)))
    if word is not None and word.tokens >= low:
        return word
    return clean or NONE


def _continued_body(source: str, blocks: list[Block], previous: Draft, draft: Draft) -> int | None:
    """Where the rows or code lines of a split table or code block start, when `draft`
    continues the block `previous` ends in (its overlap then goes after `draft.prefix`)."""
    block = blocks[previous.last]
    if not draft.prefix or draft.first != previous.last or block.kind not in ("code", "table"):
        return None
    pos = block.start  # the start of line `skip` (found directly: the block may be huge)
    for _ in range(2 if block.kind == "table" else 1):
        pos = source.find("\n", pos, block.end) + 1
        if pos == 0:
            return None
    return pos


def _candidates(
    source: str, blocks: list[Block], previous: Draft, begin: int, nested: Nested, words: bool
) -> list[Start]:
    """Clean starts, or word starts in prose, from `begin` on, earliest first."""
    found: list[Start] = []
    starts_in = _word_starts_in if words else _clean_starts_in
    for index in range(previous.first, previous.last + 1):
        block = blocks[index]
        if block.end > begin and block.start < previous.end:
            starts_in(source, block, begin, previous.end, nested, found)
    return sorted(found)


def _clean_starts_in(
    source: str, block: Block, begin: int, end: int, nested_of: Nested, clean: list[Start]
) -> None:
    """Clean starts (block, sentence, item, row, code line) of `block` in `[begin, end)`, each
    with the structure to repeat in front."""
    if block.start >= begin:
        clean.append((block.start, ""))
    first_line = max(block.start, source.rfind("\n", block.start, max(begin, block.start)) + 1)
    lines = line_starts(source, first_line, min(block.end, end))
    lines = [s for s in lines if begin <= s < end and s > block.start and source[s] != "\n"]
    if block.kind == "table":
        header_end = source.find("\n", source.find("\n", block.start) + 1) + 1
        header = source[block.start : header_end] if header_end > block.start else ""
        clean.extend((row, header) for row in lines if header and row >= header_end)
        return
    if block.kind == "code":
        _code_starts(source, block, lines, clean)
        return
    nested = nested_of(block)
    fences = [c for c in nested if FENCE_LINE.match(c.opener)]
    for start in lines:
        code_line = _open_fence(fences, start) is not None  # whole, behind its opener
        if code_line or (block.kind == "list" and _LIST_ITEM.match(source, start)):
            clean.append((start, _openers(nested, start)))
    _prose_starts(source, block, begin, end, nested, _SENTENCE_START, clean)


def _word_starts_in(
    source: str, block: Block, begin: int, end: int, nested_of: Nested, words: list[Start]
) -> None:
    """Word starts in the prose of `block` in `[begin, end)` (none in a table or code block)."""
    if block.kind not in ("table", "code"):
        _prose_starts(source, block, begin, end, nested_of(block), _WORD_START, words)


def _prose_starts(
    source: str,
    block: Block,
    begin: int,
    end: int,
    nested: list[Container],
    pattern: re.Pattern[str],
    found: list[Start],
) -> None:
    """Where `pattern`'s matches end in `[begin, end)`, outside code and container lines."""
    matches = pattern.finditer(source, max(begin - 1, block.start), min(end, block.end))
    if not nested:  # each match takes a character at `begin - 1` or later and ends before `end`
        found.extend([(match.end(), "") for match in matches])
        return
    for match in matches:
        start = match.end()
        if begin <= start < end and not _in_structure(source, nested, start):
            found.append((start, _openers(nested, start)))


def _code_starts(source: str, block: Block, lines: list[int], clean: list[Start]) -> None:
    """Whole code lines: behind the reopened fence, or indented as they are."""
    first_end = source.find("\n", block.start, block.end)
    opener = FENCE_LINE.match(source[block.start : first_end if first_end >= 0 else block.end])
    if opener is None:  # indented code: the lines keep their indentation and stay code
        clean.extend((start, "") for start in lines)
        return
    structure = opener.group(0) + "\n"
    last = source.rfind("\n", block.start, block.end) + 1
    closed = last > block.start and FENCE_LINE.match(source[last : block.end]) is not None
    clean.extend((start, structure) for start in lines if not (closed and start >= last))


def _nested_of(source: str, doc: DocTokens) -> Nested:
    """`_nested` for the blocks of `doc`'s document, each block's found once."""
    found = _CONTAINERS.setdefault(doc, {})

    def nested(block: Block) -> list[Container]:
        if block not in found:
            found[block] = _nested(source, block)
        return found[block]

    return nested


def _nested(source: str, block: Block) -> list[Container]:
    """Fences and admonitions inside a list, quote, admonition or HTML block."""
    if not any(source.find(mark, block.start, block.end) >= 0 for mark in ("```", "~~~", ":::")):
        return []
    return containers(source, line_starts(source, block.start, block.end), block.end)


def _open_fence(fences: list[Container], pos: int) -> Container | None:
    """The fence whose code lines `pos` starts one of (not its opening or closing line)."""
    for fence in fences:
        if fence.open_end < pos and (fence.close_start is None or pos < fence.close_start):
            return fence
    return None


def _in_structure(source: str, nested: list[Container], pos: int) -> bool:
    """Inside a fenced code block, or on an opening or closing line of a container."""
    for container in nested:
        close = container.close_start
        close_end = len(source) if close is None else source.find("\n", close)
        close_end = len(source) if close_end < 0 else close_end
        if FENCE_LINE.match(container.opener):
            inside = container.open_start <= pos and (close is None or pos <= close_end)
        else:
            on_open = container.open_start <= pos <= container.open_end
            inside = on_open or (close is not None and close <= pos <= close_end)
        if inside:
            return True
    return False


def _openers(nested: list[Container], pos: int) -> str:
    """Opening lines of the fences and admonitions still open at `pos`."""
    return "".join(
        c.opener + "\n"
        for c in nested
        if c.open_end < pos and (c.close_start is None or pos <= c.close_start)
    )

"""Splitting one block that is larger than the budget, at its own seams.

Code splits by lines with its fence closed and reopened (language kept), a table by rows
with the header and delimiter rows repeated, a list by items, an admonition by the blocks
inside it (reopened with its `:::type` line), a paragraph by sentences. Whatever is still
too large splits at words, and a "word" longer than the budget at token boundaries (never
inside a character). Each piece's new text is an exact slice of the source; the repeated
structure (`prefix`, `suffix`) is added around it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import pairwise

from shared.pipeline.chunk.budget import check
from shared.pipeline.chunk.doc_tokens import DocTokens
from shared.pipeline.chunk.markdown_blocks import FENCE_LINE, Block, scan_blocks
from shared.tokens import encoding

Cut = tuple[int, int]  # (end of the piece before, start of the piece after)

_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’»)\]]*(\s+)|[。！？]+")
_WHITESPACE = re.compile(r"\s+")
_ADMONITION_OPEN = re.compile(r"^ {0,3}(:{3,})[ \t]*[A-Za-z]")
_ADMONITION_CLOSE = re.compile(r"^ {0,3}(:{3,})[ \t]*$")
_LIST_ITEM = re.compile(r"( *)(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)")


@dataclass(frozen=True, slots=True)
class Piece:
    """Part of a block: `source[start:end]` plus the structure repeated around it."""

    start: int
    end: int
    prefix: str = ""
    suffix: str = ""
    tokens: int = 0  # estimate for prefix + slice + suffix; the chunker measures the final text


@dataclass(frozen=True, slots=True)
class Container:
    """A code fence or an admonition inside a block, with its opening and closing lines."""

    open_start: int
    open_end: int  # end of the opening line (before its newline)
    close_start: int | None  # start of the closing line; None: left open
    opener: str
    closer: str


class _TokenMap:
    """Where each token of `source[start:end]` starts (`DocTokens.token_starts`)."""

    def __init__(self, doc: DocTokens, start: int, end: int) -> None:
        self.offsets = doc.token_starts(start, end)
        self.end = end

    def count(self, start: int, end: int) -> int:
        return bisect_left(self.offsets, end) - bisect_left(self.offsets, start)

    def position_after(self, start: int, tokens: int) -> int:
        """Character position `tokens` tokens after `start` (a character boundary)."""
        index = bisect_left(self.offsets, start) + max(tokens, 1)
        return self.offsets[index] if index < len(self.offsets) else self.end


def split_block(
    source: str, block: Block, target: int, cap: int, doc: DocTokens | None = None
) -> list[Piece]:
    """Pieces of `block`, each estimated at no more than `cap` tokens, aimed at `target`;
    `doc` holds the document's tokens (made here when not given)."""
    tokens = _TokenMap(doc or DocTokens(source, block.start), block.start, block.end)
    lines = line_starts(source, block.start, block.end)
    prefix_all = ""
    nested: list[Container] = []
    if block.kind == "table" and len(lines) > 3:
        prefix_all = source[lines[0] : lines[2]]
        seams = [_line_cuts(lines[3:])]
    elif block.kind == "list":
        nested = containers(source, lines, block.end)
        seams = [_line_cuts(_item_starts(source, lines)), _line_cuts(lines[1:])]
    elif block.kind == "admonition":
        nested = containers(source, lines, block.end)
        inner = scan_blocks(source, lines[1], lines[-1]) if len(lines) > 2 else []
        seams = [[(a.end, b.start) for a, b in pairwise(inner)]]
        seams.append(_line_cuts(lines[1:]))
    elif block.kind in ("code", "quote", "html"):
        nested = containers(source, lines, block.end)
        seams = [_line_cuts(lines[1:])]
    else:
        seams = [_sentence_cuts(source, block.start, block.end), _line_cuts(lines[1:])]
    seams.append(_word_cuts(source, block.start, block.end))
    seams = [_allowed(source, cuts, nested) for cuts in seams]
    overhead = _overhead(prefix_all, nested)
    spans = _pack(tokens, block.start, block.end, seams, max(target - overhead, 1), cap - overhead)
    pieces = []
    for index, (start, end) in enumerate(spans):
        start, end = _tidy(source, start, end)
        prefix = _openers(nested, start) if index else ""
        suffix = _closers(nested, end) if index < len(spans) - 1 else unclosed(nested)
        if index and prefix_all:
            prefix = prefix_all + prefix
        estimate = tokens.count(start, end) + (overhead if (prefix or suffix) else 0)
        pieces.append(Piece(start, end, prefix, suffix, estimate))
    return pieces


def fence_closer(source: str, block: Block) -> str:
    """The closing fence a code block left open at the end of the document needs ("" if none)."""
    if block.kind != "code":
        return ""
    lines = line_starts(source, block.start, block.end)
    return unclosed(containers(source, lines, block.end))


def unclosed(containers: list[Container]) -> str:
    return "".join("\n" + c.closer for c in reversed(containers) if c.close_start is None)


def line_starts(source: str, start: int, end: int) -> list[int]:
    starts = [start]
    pos = source.find("\n", start, end)
    while pos >= 0:
        starts.append(pos + 1)
        pos = source.find("\n", pos + 1, end)
    return starts


def _line_cuts(starts: list[int]) -> list[Cut]:
    return [(start - 1, start) for start in starts]


def _item_starts(source: str, lines: list[int]) -> list[int]:
    """Starts of the list's own items: marker lines at the first item's indentation."""
    first = _LIST_ITEM.match(source, lines[0])
    indent = len(first.group(1)) if first else 0
    starts = []
    for start in lines[1:]:
        item = _LIST_ITEM.match(source, start)
        if item and len(item.group(1)) == indent:
            starts.append(start)
    return starts


def _sentence_cuts(source: str, start: int, end: int) -> list[Cut]:
    cuts = []
    for match in _SENTENCE_END.finditer(source, start, end):
        if match.group(1) is not None:
            cuts.append((match.start(1), match.end(1)))
        else:
            cuts.append((match.end(), match.end()))
    return cuts


def _word_cuts(source: str, start: int, end: int) -> list[Cut]:
    return [(m.start(), m.end()) for m in _WHITESPACE.finditer(source, start, end)]


def containers(source: str, lines: list[int], end: int) -> list[Container]:
    """Code fences and admonitions opened and closed inside a block (line by line)."""
    found: list[Container] = []
    stack: list[tuple[int, int, str, str, str]] = []  # start, end, opener, closer, marker
    for start in lines:
        line_end = source.find("\n", start, end)
        line_end = end if line_end < 0 else line_end
        line = source[start:line_end]
        fence = FENCE_LINE.match(line)
        if stack and stack[-1][4][0] in "`~":
            marker = stack[-1][4]
            if fence and _closes(fence, marker):
                opened = stack.pop()
                found.append(Container(opened[0], opened[1], start, opened[2], opened[3]))
            continue
        if fence and not (fence["marker"][0] == "`" and "`" in fence["info"]):
            closer = fence["indent"] + fence["marker"]
            stack.append((start, line_end, line, closer, fence["marker"]))
        elif admonition := _ADMONITION_OPEN.match(line):
            colons = admonition.group(1)
            stack.append((start, line_end, line, colons, colons))
        elif (close := _ADMONITION_CLOSE.match(line)) and _closes_admonition(close, stack):
            opened = stack.pop()
            found.append(Container(opened[0], opened[1], start, opened[2], opened[3]))
    for open_start, open_end, opener, closer, _ in stack:
        found.append(Container(open_start, open_end, None, opener, closer))
    return sorted(found, key=lambda c: c.open_start)


def _closes(fence: re.Match[str], marker: str) -> bool:
    found = fence["marker"]
    return found[0] == marker[0] and len(found) >= len(marker) and not fence["info"].strip()


def _closes_admonition(close: re.Match[str], stack: list[tuple[int, int, str, str, str]]) -> bool:
    return bool(stack) and len(close.group(1)) >= len(stack[-1][4])


def _allowed(source: str, cuts: list[Cut], containers: list[Container]) -> list[Cut]:
    """No cut inside an opening or closing line, nor one that leaves a piece empty."""
    if not containers:
        return cuts
    fences = []  # (first, last): a piece may not end in (first, last] or start in [first, last)
    for c in containers:
        fences.append((c.open_start, c.open_end))
        if c.close_start is not None:
            close_end = source.find("\n", c.close_start)
            fences.append((c.close_start - 1, len(source) if close_end < 0 else close_end))
    allowed = []
    for cut in cuts:
        end, start = _tidy_cut(source, cut)
        if not any(first < end <= last or first <= start < last for first, last in fences):
            allowed.append(cut)
    return allowed


def _tidy_cut(source: str, cut: Cut) -> tuple[int, int]:
    """Where the piece before a cut really ends and the next really starts (blank lines out)."""
    end, start = cut
    while end > 0 and source[end - 1] == "\n":
        end -= 1
    while start < len(source) and source[start] == "\n":
        start += 1
    return end, start


def _open_at(containers: list[Container], pos: int) -> list[Container]:
    return [
        c
        for c in containers
        if c.open_end < pos and (c.close_start is None or pos <= c.close_start)
    ]


def _openers(containers: list[Container], pos: int) -> str:
    return "".join(c.opener + "\n" for c in _open_at(containers, pos))


def _closers(containers: list[Container], pos: int) -> str:
    return "".join("\n" + c.closer for c in reversed(_open_at(containers, pos)))


def _overhead(prefix: str, containers: list[Container]) -> int:
    """Tokens the repeated structure may add to one piece (all containers, to be safe)."""
    text = prefix + "".join(c.opener + "\n" + "\n" + c.closer for c in containers)
    return len(encoding().encode_ordinary(text)) + 2 if text else 0


def _tidy(source: str, start: int, end: int) -> tuple[int, int]:
    """Blank lines at a piece's edges belong to the gap between pieces."""
    while start < end and source[start] == "\n":
        start += 1
    while end > start and source[end - 1] == "\n":
        end -= 1
    return start, end


def _pack(
    tokens: _TokenMap, start: int, end: int, seams: list[list[Cut]], target: int, cap: int
) -> list[tuple[int, int]]:
    """Greedy spans toward `target`, never over `cap`, preferring the earlier seam kinds."""
    spans = []
    cap = max(cap, 1)
    while tokens.count(start, end) > cap:
        check()
        cut = _choose(tokens, start, end, seams, target, cap)
        spans.append((start, cut[0]))
        start = cut[1]
    spans.append((start, end))
    return spans


def _choose(
    tokens: _TokenMap, start: int, end: int, seams: list[list[Cut]], target: int, cap: int
) -> Cut:
    for cuts in seams:
        first = bisect_right(cuts, (start, end))
        under: Cut | None = None
        for index in range(first, len(cuts)):
            cut = cuts[index]
            if cut[0] <= start or cut[1] >= end:
                continue
            size = tokens.count(start, cut[0])
            if size > cap:
                break
            if size <= target:
                under = cut
            elif under is None or tokens.count(start, under[0]) < target // 2:
                return cut
            else:
                break
        if under is not None:
            return under
    position = tokens.position_after(start, target)
    if position <= start:
        position = min(start + 1, end)
    return position, position

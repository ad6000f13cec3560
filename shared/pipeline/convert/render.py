"""Lines of a PDF (headings already marked) to Markdown blocks, with a page map.

Lines join into paragraphs unless a gap, a size change, a heading or a list item separates
them; a paragraph that does not end a sentence continues over a page or column break.
Hyphenated line ends are joined ("zieken-" + "huis" = "ziekenhuis").
"""

from __future__ import annotations

import bisect
import itertools
import re
import statistics
from dataclasses import dataclass, field

from shared.pipeline.convert.bullets import nest_items
from shared.pipeline.convert.lines import Line
from shared.pipeline.convert.tables import continues_table

PARAGRAPH_GAP = 1.25  # a gap this many times the usual line spacing starts a new paragraph
SENTENCE_GAP = 2.0  # ... unless it is at most this many and falls in the middle of a sentence
GAP_TOLERANCE = 0.05  # gaps this close (relative) count as one when finding the usual gap
_ORDERED = re.compile(r"^(\d{1,2}|[a-zA-Z])[.)]\s+\S")
_SENTENCE_END = (".", "!", "?", ":", ";", "…", '."', ".”", "!”", "?”", ".)")
# Words after a line-end hyphen that show the hyphen is real ("moeder- en kindzorg").
_KEEP_HYPHEN_BEFORE = frozenset({"en", "of", "and", "or", "und", "oder", "et", "ou", "tot", "to"})
# A capitalised abbreviation before a line-end hyphen keeps it: "MDL-" + "artsen", "CT-scanner".
_ABBREVIATION = re.compile(r"(?:^|[\s(/])[A-Z0-9]{2,}$")
_MARKDOWN_START = re.compile(r"^(#|>|[-+*]\s|\d+[.)]\s|=+$|-+$|```|~~~|<|\|)")


@dataclass
class _Block:
    kind: str  # "heading", "paragraph", "item", "table"
    level: int = 0
    marker: str = "-"
    lines: list[Line] = field(default_factory=list)

    @property
    def last(self) -> Line:
        return self.lines[-1]


def _item_marker(text: str) -> tuple[str, str] | None:
    """("-" or "3.", text after the marker) when `text` starts a list item."""
    if text == "•":
        return "-", ""
    for glyph in ("• ", "- ", "– ", "* "):
        if text.startswith(glyph):
            return "-", text[len(glyph) :].strip()
    if _ORDERED.match(text):
        marker, rest = text.split(None, 1)
        return (marker if marker[0].isdigit() else "-"), (rest if marker[0].isdigit() else text)
    return None


def usual_line_gap(pages: list[list[Line]]) -> float:
    """The baseline distance between lines inside a paragraph: the smallest gap (between
    consecutive lines of one size on a page) that is common (a tenth of the gaps, a fifth as
    many as the most common gap, at least two). Not the median: where one-line paragraphs
    and list items outnumber the lines they wrap to, the median is the paragraph gap and
    paragraphs merge."""
    gaps = sorted(
        previous.y - line.y
        for lines in pages
        for previous, line in itertools.pairwise(lines)
        if previous.size == line.size and 0 < previous.y - line.y < 3 * line.size
    )
    if not gaps:
        return 0.0
    # How many gaps lie within GAP_TOLERANCE of each gap (gaps jitter by rounding and OCR).
    near = [
        bisect.bisect_right(gaps, gap * (1 + GAP_TOLERANCE))
        - bisect.bisect_left(gaps, gap * (1 - GAP_TOLERANCE))
        for gap in gaps
    ]
    common = max(2.0, 0.1 * len(gaps), 0.2 * max(near))
    first = next((i for i, count in enumerate(near) if count >= common), near.index(max(near)))
    low, high = gaps[first] * (1 - GAP_TOLERANCE), gaps[first] * (1 + GAP_TOLERANCE)
    return statistics.median(gap for gap in gaps if low <= gap <= high)


def _mid_sentence(before: str, after: str) -> bool:
    """`before` stops without closing punctuation and `after` goes on in lower case."""
    return bool(before) and not before.endswith(_SENTENCE_END) and after[:1].islower()


def _continues(block: _Block, line: Line, usual_gap: float) -> bool:
    """Whether `line` carries on the paragraph or list item `block`."""
    previous = block.last
    if block.kind == "heading" or abs(previous.size - line.size) > 0.6:
        return False
    item = block.lines[0]
    if block.kind == "item" and item.text and line.x < (item.text_x or item.x) - 2:
        return False  # not indented under the item's text: the list ended
    gap = previous.y - line.y
    if line.page == previous.page and gap > 0:
        usual = usual_gap or previous.size * 1.25
        if gap <= max(usual * PARAGRAPH_GAP, previous.size * 1.05):
            return True
        # A wider gap in the middle of a sentence (a line set taller by something inline)
        # does not end the paragraph.
        return gap <= usual * SENTENCE_GAP and _mid_sentence(previous.text, line.text)
    # A page or column break: carry on only in the middle of a sentence.
    return bool(previous.text) and not previous.text.endswith(_SENTENCE_END)


def build_blocks(pages: list[list[Line]]) -> list[_Block]:
    usual_gap = usual_line_gap(pages)
    blocks: list[_Block] = []
    for lines in pages:
        for line in lines:
            if line.table and continues_table(blocks[-1] if blocks else None, line):
                blocks[-1].lines.append(line)  # the rows after a page break
                continue
            if line.heading or line.table:
                kind = "table" if line.table else "heading"
                blocks.append(_Block(kind, level=line.heading, lines=[line]))
                continue
            item = _item_marker(line.text)
            if item is not None:
                marker, text = item
                line.text = text
                blocks.append(_Block("item", marker=marker, lines=[line]))
                continue
            last = blocks[-1] if blocks else None
            if last is not None and last.kind == "item" and not last.lines[0].text:
                last.lines[0] = line  # the bullet glyph stood alone; this is its text
                continue
            joins = last is not None and last.kind not in ("heading", "table")
            if joins and last is not None and _continues(last, line, usual_gap):
                last.lines.append(line)
                continue
            blocks.append(_Block("paragraph", lines=[line]))
    blocks = [block for block in blocks if any(line.text for line in block.lines)]
    nest_items(blocks)
    return blocks


def _join(left: str, right: str) -> tuple[str, str]:
    """The separator between two lines and the (maybe shortened) left line."""
    if not (len(left) > 1 and left.endswith(("-", "\u2010")) and left[-2].isalpha()):
        return " ", left
    first_word = (right.split(None, 1) or [""])[0].strip(",.;:")
    if not right[:1].islower():
        return "", left  # "Noord-" + "Holland"
    if first_word in _KEEP_HYPHEN_BEFORE:
        return " ", left  # "moeder- en kindzorg"
    if _ABBREVIATION.search(left[:-1]):
        return "", left  # "MDL-" + "artsen"
    return "", left[:-1]  # "zieken-" + "huis"


def join_lines(texts: list[str]) -> str:
    """Lines of one block (a heading set over several lines) as one, a line-end hyphen
    handled as in paragraphs ("ABCD-" + "syndroom": "ABCD-syndroom")."""
    text = texts[0]
    for right in texts[1:]:
        separator, text = _join(text, right)
        text = f"{text}{separator}{right}"
    return text


def _escape(text: str) -> str:
    """Keep a paragraph that happens to start like Markdown syntax a paragraph."""
    return "\\" + text if _MARKDOWN_START.match(text) else text


OcrSpan = tuple[int, int, int, float]  # (start, end, words, mean confidence) of an OCR line


def render(blocks: list[_Block]) -> tuple[str, list[tuple[int, int]], list[OcrSpan]]:
    """Markdown text, sorted (offset, page) pairs where each page's text begins, and where
    each OCR line's text lies in it with its words' mean confidence."""
    out: list[str] = []
    length = 0
    page_starts: list[tuple[int, int]] = []
    spans: list[OcrSpan] = []
    previous_kind = ""
    for block in blocks:
        if out:
            sep = "\n" if block.kind == "item" and previous_kind == "item" else "\n\n"
            out.append(sep)
            length += len(sep)
        prefix = {
            "heading": "#" * block.level + " ",
            "item": " " * block.level + block.marker + " ",
        }.get(block.kind, "")
        pieces: list[tuple[str, Line]] = []  # (text, line) per line, joined below
        for line in block.lines:
            if pieces and block.kind == "table":
                pieces[-1] = (pieces[-1][0] + "\n", pieces[-1][1])
            elif pieces:
                sep, shortened = _join(pieces[-1][0], line.text)
                pieces[-1] = (shortened + sep, pieces[-1][1])
            pieces.append((line.text, line))
        if block.kind == "paragraph" and pieces:
            pieces[0] = (_escape(pieces[0][0]), pieces[0][1])
        out.append(prefix)
        for index, (text, line) in enumerate(pieces):
            if not page_starts or page_starts[-1][1] != line.page:
                page_starts.append((length, line.page))  # a block's page starts at its marker
            if index == 0:
                length += len(prefix)
            out.append(text)
            if line.confidence is not None and line.words:
                spans.append((length, length + len(text), line.words, line.confidence))
            length += len(text)
        previous_kind = block.kind
    return "".join(out) + ("\n" if out else ""), page_starts, spans

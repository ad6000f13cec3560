"""Text lines of one PDF page with the position, font size and weight of each.

pypdf's text visitor reports each run of text with its matrices, font and font size; pypdf
itself already decides where spaces and line breaks go. We keep its text and add what layout
needs: the baseline, the size as drawn (font size times the matrices' scale) and boldness.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shared.pipeline.convert.bullets import mark_drawn_bullets
from shared.pipeline.convert.graphics import GraphicsCollector
from shared.pipeline.convert.tables import take_tables
from shared.pipeline.convert.text import BULLET_GLYPHS, clean_pdf_line

if TYPE_CHECKING:  # pypdf itself is loaded by `convert.pdf`, when a PDF is converted
    from pypdf import PageObject

_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|medium|-bd|,bd", re.I)
_FORCE_BOLD_FLAG = 1 << 18


@dataclass
class Line:
    """One line of text on a page; `heading` is the Markdown level layout gives it (0: none)."""

    text: str
    page: int
    x: float
    y: float  # baseline in PDF user space: larger is higher on the page
    size: float
    bold: bool
    heading: int = 0
    text_x: float | None = None  # where the words start when a bullet glyph comes first
    confidence: float | None = None  # OCR: mean word confidence (0-100); None: a text layer
    words: int = 0  # OCR: how many words the confidence is the mean of
    table: bool = False  # `text` is a whole GFM table (shared.pipeline.convert.tables)


@dataclass
class _Piece:
    text: str
    x: float
    y: float
    size: float
    bold: bool


@dataclass
class _Collector:
    """Receives pypdf's visitor calls and cuts them into raw lines at pypdf's line breaks."""

    check: Callable[[], None]
    raw_lines: list[list[_Piece]] = field(default_factory=list)
    current: list[_Piece] = field(default_factory=list)
    bold_cache: dict[int, bool] = field(default_factory=dict)

    def visit(self, text: Any, cm: Any, tm: Any, font: Any, font_size: Any) -> None:
        self.check()
        if not text:
            return
        x, y, size = _placement(cm, tm, font_size)
        bold = self._bold(font)
        for number, part in enumerate(str(text).split("\n")):
            if number > 0:
                self.end_line()
                y -= size * 1.2  # pypdf broke the line inside one run: the next line down
            if part:
                self.current.append(_Piece(part, x, y, size, bold))

    def end_line(self) -> None:
        if self.current:
            self.raw_lines.append(self.current)
            self.current = []

    def _bold(self, font: Any) -> bool:
        if font is None:
            return False
        key = id(font)
        if key not in self.bold_cache:
            self.bold_cache[key] = _font_is_bold(font)
        return self.bold_cache[key]


def _placement(cm: Any, tm: Any, font_size: Any) -> tuple[float, float, float]:
    """Origin and drawn size of a text run: the text matrix times the current matrix."""
    try:
        a, b, c, d, e, f = (float(v) for v in cm)
        _, _, tc, td, te, tf = (float(v) for v in tm)
        x = te * a + tf * c + e
        y = te * b + tf * d + f
        scale = math.hypot(tc * a + td * c, tc * b + td * d)
        size = abs(float(font_size)) * scale
    except (TypeError, ValueError):
        return 0.0, 0.0, 0.0
    if not all(math.isfinite(v) for v in (x, y, size)):
        return 0.0, 0.0, 0.0
    return x, y, round(size, 2)


def _font_is_bold(font: Any) -> bool:
    """Bold by the font's name, its descriptor's weight, or the ForceBold flag."""
    try:
        name = str(font.get("/BaseFont", "")).split("+", 1)[-1]
        if _BOLD_NAME.search(name):
            return True
        descriptor = font.get("/FontDescriptor")
        if descriptor is None and "/DescendantFonts" in font:
            descendant = font["/DescendantFonts"][0].get_object()
            descriptor = descendant.get("/FontDescriptor")
        if descriptor is None:
            return False
        descriptor = descriptor.get_object()
        weight = float(descriptor.get("/FontWeight", 0) or 0)
        flags = int(descriptor.get("/Flags", 0) or 0)
        return weight >= 600 or bool(flags & _FORCE_BOLD_FLAG)
    except Exception:  # a malformed font dictionary says nothing about weight
        return False


def _merge_line(raw_lines: list[list[_Piece]], page: int) -> Line | None:
    """One line from pypdf's raw lines on one baseline: pypdf's own spacing inside each,
    a space between them (they were drawn apart), left to right."""
    ordered = sorted(raw_lines, key=lambda raw: raw[0].x)
    text = clean_pdf_line(" ".join("".join(piece.text for piece in raw) for raw in ordered))
    if not text:
        return None
    pieces = [piece for raw in ordered for piece in raw if piece.text.strip()]
    if not pieces:
        return None
    by_size: dict[float, int] = {}
    for piece in pieces:
        by_size[piece.size] = by_size.get(piece.size, 0) + len(piece.text.strip())
    size = max(by_size, key=lambda s: (by_size[s], s))
    total = sum(by_size.values())
    bold_chars = sum(len(piece.text.strip()) for piece in pieces if piece.bold)
    first = pieces[0]
    words = next((p for p in pieces if p.text.strip(" " + "".join(BULLET_GLYPHS))), first)
    return Line(text, page, first.x, first.y, size, bold_chars >= 0.9 * total, 0, words.x)


def _far_right(left: list[_Piece], right: list[_Piece]) -> bool:
    """Whether `right` starts well past where `left` ends (a column gutter, a table cell):
    such runs stay separate lines so reading order can tell columns apart. The end is
    estimated at 0.45 of the size per character; pypdf reports no widths."""
    end = left[-1]
    return right[0].x - (end.x + len(end.text) * end.size * 0.45) > max(0.6 * end.size, 1.0)


def _split_far(raw: list[_Piece]) -> list[list[_Piece]]:
    """pypdf's raw line cut where a run starts far right of the one before (pypdf puts
    runs of two columns on one line when they share a baseline)."""
    parts = [[raw[0]]]
    for piece in raw[1:]:
        if piece.text.strip() and _far_right(parts[-1], [piece]):
            parts.append([piece])
        else:
            parts[-1].append(piece)
    return parts


def extract_lines(page: PageObject, number: int, check: Callable[[], None]) -> list[Line]:
    """The text lines of `page` (1-based `number`) in content order.

    Runs that pypdf puts on separate lines but that share a baseline (a bullet drawn apart
    from its text, table cells) are joined into one line, left to right.
    """
    collector = _Collector(check)
    graphics = GraphicsCollector(check)  # also checks the deadline every 512 operators
    page.extract_text(visitor_text=collector.visit, visitor_operand_before=graphics.visit)
    collector.end_line()
    tables = take_tables(graphics.shapes, collector.raw_lines)
    groups: list[list[list[_Piece]]] = []
    starts: dict[int, int] = {}  # raw line index -> index of the group it went to
    for index, whole in enumerate(collector.raw_lines):
        if not whole:
            continue
        for raw in _split_far(whole):
            if groups:
                last = groups[-1][-1]
                tolerance = 0.35 * max(max(p.size for p in last), max(p.size for p in raw), 1.0)
                if abs(last[0].y - raw[0].y) <= tolerance and not _far_right(last, raw):
                    groups[-1].append(raw)
                    starts.setdefault(index, len(groups) - 1)
                    continue
            groups.append([raw])
            starts.setdefault(index, len(groups) - 1)
    lines: list[Line | None] = [_merge_line(group, number) for group in groups]
    mark_drawn_bullets([line for line in lines if line is not None], graphics.shapes)
    # Each table goes where its first run was drawn (positions taken before any insertion).
    places = [next((starts[i] for i in sorted(starts) if i >= t.first), len(lines)) for t in tables]
    for table, at in reversed(list(zip(tables, places, strict=True))):
        text = table.markdown()
        lines.insert(at, Line(text, number, table.x, table.y, table.size, False, table=True))
    return [line for line in lines if line is not None]

"""Page layout of a PDF: running headers and footers, body size, and which lines are headings.

Headings come from the outline when the PDF has one (the author's own structure), else from
the fonts: the body size is the most common size; clearly larger short lines, and short bold
lines at body size, are headings; the largest style is H1, the next H2, and so on. Under an
outline, the fonts still give the sub-headings it leaves out: styles less prominent than every
bookmarked heading's become the levels below the outline's deepest.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from shared.pipeline.convert.heading_context import body_is_bold, bold_body_line_is_heading
from shared.pipeline.convert.lines import Line
from shared.pipeline.convert.render import join_lines, usual_line_gap

EDGE_LINES = 3  # lines at the top and at the bottom of a page that may be running text
EDGE_BAND = 0.15  # ... and only within this share of the page height from its top or bottom
LARGER = 1.15  # a size at least this much above the body size is "clearly larger"
MAX_HEADING_CHARS = 120
MAX_HEADING_WORDS = 16
MAX_HEADING_LINES = 3

_PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:(?:page|pagina|p\.|pag\.|seite|blz\.?)\s*)?(?:\d{1,4}|[ivxlc]{1,7})"
    r"(?:\s*(?:/|of|van|von|de|sur)\s*\d{1,4})?[-–—\s]*$",
    re.I,
)
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class OutlineEntry:
    """One bookmark: its Markdown level, title, 1-based page, and its top (None: unknown)."""

    level: int
    title: str
    page: int
    top: float | None = None


def _edge_lines(lines: list[Line], box: tuple[float, float] | None) -> list[Line]:
    """The top-most and bottom-most lines of a page by position (not by drawing order) that
    lie in the page's top or bottom band, where running headers and footers live."""
    by_height = sorted(lines, key=lambda line: -line.y)
    candidates = by_height[:EDGE_LINES] + by_height[EDGE_LINES:][-EDGE_LINES:]
    if box is None:
        return candidates
    bottom, top = box
    band = (top - bottom) * EDGE_BAND
    return [line for line in candidates if line.y >= top - band or line.y <= bottom + band]


def _running_key(line: Line) -> str:
    """Digits as "#", case and spacing ignored. A line read by OCR also loses a first word
    of one or two characters and a last one of digits: OCR reads the logo beside a running
    name differently on each page ("4. HagaZiekenhuis", "rf HagaZiekenhuis 2")."""
    words = line.text.lower().split()
    if line.confidence is not None:
        if len(words) > 1 and len(words[0].strip(".,:;")) <= 2:
            words = words[1:]
        if len(words) > 1 and words[-1].isdigit():
            words = words[:-1]
    return _DIGITS.sub("#", " ".join(words))


def remove_running_lines(
    pages: list[list[Line]], boxes: list[tuple[float, float] | None]
) -> list[str]:
    """Delete running headers, footers and page numbers in place; return warnings.

    Running text is a line at the top or bottom of a page that recurs (digits ignored, so
    "Page 3 of 7" recurs) on most pages with text; a bare page number at an edge goes too.
    `boxes` holds each page's (bottom, top) in user space, None when unknown.
    """
    edges = [_edge_lines(lines, box) for lines, box in zip(pages, boxes, strict=True)]
    with_text = sum(1 for lines in pages if lines)
    if not with_text:
        return []
    counts: Counter[str] = Counter()
    for edge in edges:
        counts.update({_running_key(line) for line in edge})
    needed = max(2, math.ceil(0.5 * with_text))
    running = {key for key, count in counts.items() if count >= needed}
    removed: dict[str, str] = {}
    page_numbers = 0
    for lines, edge_lines in zip(pages, edges, strict=True):
        on_edge = {id(line) for line in edge_lines}
        keep = []
        for line in lines:
            if id(line) in on_edge and _PAGE_NUMBER.match(line.text):
                page_numbers += 1
            elif id(line) in on_edge and _running_key(line) in running:
                removed.setdefault(_running_key(line), line.text)
            else:
                keep.append(line)
        lines[:] = keep
    warnings = [f"running header or footer removed: {text!r}" for text in removed.values()]
    if page_numbers:
        warnings.append(f"page numbers removed from {page_numbers} page(s)")
    return warnings


def body_size(pages: list[list[Line]]) -> float:
    """The size most characters are set in (rounded to half points)."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            sizes[round(line.size * 2) / 2] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _is_list_item(text: str) -> bool:
    return text.startswith(("• ", "- ", "– ", "* ")) or text == "•"


def _heading_style(line: Line, body: float) -> tuple[float, bool] | None:
    """The style that makes `line` a heading candidate, or None."""
    text = line.text
    if (
        line.table
        or len(text) > MAX_HEADING_CHARS
        or len(text.split()) > MAX_HEADING_WORDS
        or sum(ch.isalpha() for ch in text) < 2
        or _is_list_item(text)
    ):
        return None
    size = round(line.size * 2) / 2
    if body and size >= body * LARGER:
        return size, line.bold
    if line.bold and size >= body - 0.5 and not text.endswith((".", ",", ";")):
        return size, True
    return None


Style = tuple[float, bool]  # (size rounded to half points, bold)


def _prominence(style: Style) -> tuple[float, bool]:
    """Sort key: larger first; at one size, bold before regular."""
    return (-style[0], not style[1])


def _heading_runs(
    lines: list[Line],
    body: float,
    below: Style | None,
    usual_gap: float = 0.0,
    bold_body: bool = False,
) -> list[tuple[list[Line], Style | None]]:
    """Consecutive lines grouped: a run of heading-like lines of one style set close together
    (a heading that wraps), or a single ordinary line with style None. Lines that already are
    headings, and styles not less prominent than `below`, count as ordinary."""
    runs: list[tuple[list[Line], Style | None]] = []
    for index, line in enumerate(lines):
        style = None if line.heading else _heading_style(line, body)
        bold_at_body_size = style is not None and style[0] < body * LARGER
        if bold_at_body_size and (
            bold_body or not bold_body_line_is_heading(lines, index, usual_gap)
        ):
            style = None
        if style is not None and below is not None and _prominence(style) <= _prominence(below):
            style = None
        if style is not None and runs and runs[-1][1] == style:
            previous = runs[-1][0][-1]
            if 0 < previous.y - line.y <= 1.6 * line.size:
                runs[-1][0].append(line)
                continue
        runs.append(([line], style))
    return runs


def mark_font_headings(
    pages: list[list[Line]], body: float, *, below: Style | None = None, first_level: int = 1
) -> None:
    """Give heading levels to heading-like lines, merging a heading set over several lines.

    A run that is too long to be a heading (a bold warning paragraph, an intro set large)
    stays text: more than three lines, or more than two for bold at body size. With `below`,
    only styles less prominent than it count, numbered from `first_level`.
    """
    style_of: dict[int, Style] = {}
    usual_gap = usual_line_gap(pages)
    bold_body = body_is_bold(pages, body)
    for lines in pages:
        merged: list[Line] = []
        for run, style in _heading_runs(lines, body, below, usual_gap, bold_body):
            limit = MAX_HEADING_LINES if style and style[0] >= body * LARGER else 2
            if style is None or len(run) > limit:
                merged.extend(run)
                continue
            head = run[0]
            head.text = join_lines([line.text for line in run])
            style_of[id(head)] = style
            merged.append(head)
        lines[:] = merged
    ranking = sorted(set(style_of.values()), key=_prominence)
    levels = {style: min(first_level + rank, 6) for rank, style in enumerate(ranking)}
    for lines in pages:
        for line in lines:
            if id(line) in style_of:
                line.heading = levels[style_of[id(line)]]


def mark_subheadings_under_outline(pages: list[list[Line]], body: float) -> None:
    """After `mark_outline_headings`: sub-headings the outline leaves out, from the fonts.

    Only styles less prominent than every bookmarked heading's qualify (so an outline whose
    headings look like body text adds nothing), at the levels below the outline's deepest.
    """
    marked = [line for lines in pages for line in lines if line.heading]
    if not marked:
        return
    least = max(((round(line.size * 2) / 2, line.bold) for line in marked), key=_prominence)
    deepest = max(line.heading for line in marked)
    if deepest < 6:
        mark_font_headings(pages, body, below=least, first_level=deepest + 1)


_NUMBERING = re.compile(
    r"^\s*(?:(?:chapter|hoofdstuk|section|deel|part)\s+)?[\dA-Z]{0,3}(?:\.\d+)*\.?\s+", re.I
)


def _match_key(text: str) -> str:
    """Letters and digits only, case-folded, without a leading section number ("2.1 ")."""
    folded = unicodedata.normalize("NFKC", _NUMBERING.sub("", text, count=1)).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


def mark_outline_headings(pages: list[list[Line]], outline: list[OutlineEntry]) -> list[str]:
    """Make the lines that carry the outline's titles headings at the outline's levels.

    A title is looked for on its page (over up to three consecutive lines, since titles
    wrap); one that is not found is inserted where the bookmark points, with a warning.
    """
    warnings: list[str] = []
    searched_from: dict[int, int] = {}
    for entry in outline:
        if not 1 <= entry.page <= len(pages):
            continue
        lines = pages[entry.page - 1]
        key = _match_key(entry.title)
        if not key:
            continue
        start = searched_from.get(entry.page, 0)
        found = _find_title(lines, start, key)
        if found is not None:
            first, count = found
            heading = lines[first]
            heading.text = " ".join(line.text for line in lines[first : first + count])
            heading.heading = entry.level
            del lines[first + 1 : first + count]
            searched_from[entry.page] = first + 1
            continue
        at = start
        if entry.top is not None:
            at = next((i for i in range(start, len(lines)) if lines[i].y < entry.top), len(lines))
        size = lines[at - 1].size if at and lines else 12.0
        lines.insert(at, Line(entry.title.strip(), entry.page, 0.0, entry.top or 0.0, size, True))
        lines[at].heading = entry.level
        searched_from[entry.page] = at + 1
        warnings.append(
            f"outline entry {entry.title.strip()!r} not found in the text of page "
            f"{entry.page}; heading inserted"
        )
    return warnings


def _find_title(lines: list[Line], start: int, key: str) -> tuple[int, int] | None:
    for first in range(start, len(lines)):
        joined = ""
        for count in range(1, MAX_HEADING_LINES + 1):
            if first + count > len(lines):
                break
            joined += _match_key(lines[first + count - 1].text)
            if joined == key:
                return first, count
            if not key.startswith(joined):
                break
    return None

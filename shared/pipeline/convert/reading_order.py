"""Lines of a page in visual reading order: top to bottom, left to right, column by column.

pypdf gives lines in content-stream order, which is often not the order a reader sees: a
browser print draws a page's bulleted lists after everything else, and layout programs draw
side boxes, footers and columns whenever they like. So lines are put in position order, and
columns are found first so a position sort does not weave two columns together.

A column gutter is a vertical strip, at least a few points wide, that the fewest lines of the
region cross while at least two lines lie on each side of it. Lines that cross it (a title
over both columns, a footer) cut the page into sections, and so does a band with no line in
any column (the columns ended; a heading under them comes after both); inside a section each
column is read top to bottom before the next. A "gutter" between short cells whose rows
share baselines is a table: its rows are read left to right, one after another. Lines whose
positions tie keep their content-stream order (the sorts are stable).

A line's right end is estimated from its length (pypdf reports no widths): 0.45 of the font
size per character, about right for the sans fonts of brochures. A line of narrow letters
can so seem to run into the gutter; one that starts left of the gutter and ends before the
right column starts, or passes the gutter's start by less than ESTIMATE_SLACK of its
width, is a line of the left column, not one across both.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from shared.pipeline.convert.lines import Line

CHAR_WIDTH = 0.45  # estimated advance of one character, in font sizes
MIN_GUTTER = 9.0  # points: a narrower empty strip is a word space, not a gutter
MIN_COLUMN_LINES = 2  # lines a column needs on each side of a gutter
TABLE_ROWS = 0.6  # share of a column's lines on a baseline of the column before: a table
TABLE_CELL_CHARS = 30  # ... when its lines are at most this long (median)
BAND_GAP = 3.0  # sizes between two baselines with nothing between: a new band of the page
BASELINE = 0.35  # lines whose baselines are this many sizes apart are on one row
ESTIMATE_SLACK = 0.1  # share of a line's estimated width its right end may be off by


@dataclass
class _Box:
    line: Line
    left: float
    right: float


def _box(line: Line) -> _Box:
    width = len(line.text) * line.size * CHAR_WIDTH
    return _Box(line, line.x, line.x + max(width, 1.0))


def _rows(boxes: list[_Box]) -> list[_Box]:
    """Top to bottom; lines on one baseline (within a tolerance) left to right."""
    ordered = sorted(boxes, key=lambda b: -b.line.y)
    out: list[_Box] = []
    row: list[_Box] = []
    for box in ordered:
        if row and row[0].line.y - box.line.y > BASELINE * max(row[0].line.size, 1.0):
            out.extend(sorted(row, key=lambda b: b.left))
            row = []
        row.append(box)
    out.extend(sorted(row, key=lambda b: b.left))
    return out


def _gutter(boxes: list[_Box]) -> tuple[float, float] | None:
    """The strip between two x positions that the fewest lines cross (the widest among
    equals), with at least MIN_COLUMN_LINES lines wholly on each side; None when there is
    none. Lines crossing it (a title, a footer) become sections of their own; at most a
    quarter of the lines may cross.
    """
    edges = sorted({b.right for b in boxes})
    best: tuple[float, float] | None = None
    best_key = (len(boxes), 0.0)
    for start in edges:
        left = [b for b in boxes if b.right <= start]
        if len(left) < MIN_COLUMN_LINES:
            continue
        after = [b.left for b in boxes if b.left >= start + MIN_GUTTER]
        if len(after) < MIN_COLUMN_LINES:
            continue
        end = min(after)
        crossing = [b for b in boxes if b.left < end and b.right > start]
        right = [b for b in boxes if b.left >= end]
        if len(right) < MIN_COLUMN_LINES or len(crossing) > len(boxes) / 4:
            continue
        key = (len(crossing), start - end)
        if key < best_key:
            best, best_key = (start, end), key
    return best


def _bands(boxes: list[_Box]) -> list[list[_Box]]:
    """`boxes` (top to bottom) cut where no line of any column lies for BAND_GAP sizes:
    the columns ended there, and what follows (a heading under both) comes after them."""
    bands: list[list[_Box]] = []
    for box in boxes:
        if bands:
            above = bands[-1][-1].line
            if above.y - box.line.y > BAND_GAP * min(above.size, box.line.size):
                bands.append([box])
                continue
            bands[-1].append(box)
        else:
            bands.append([box])
    return bands


def _is_table(columns: list[list[_Box]]) -> bool:
    """Short cells whose rows share baselines with the column before: a table, read by rows."""
    for before, column in itertools.pairwise(columns):
        baselines = [b.line.y for b in before]
        aligned = sum(
            1 for b in column if any(abs(b.line.y - y) <= BASELINE * b.line.size for y in baselines)
        )
        lengths = sorted(len(b.line.text) for b in column + before)
        if aligned < TABLE_ROWS * len(column) or lengths[len(lengths) // 2] > TABLE_CELL_CHARS:
            return False
    return True


def _left_of(box: _Box, start: float, end: float) -> bool:
    """`box` lies in the column left of the gutter (start, end), allowing for the error of
    its estimated right end."""
    if box.right <= start:
        return True
    if box.left >= start:
        return False
    return box.right < end or box.right - start <= ESTIMATE_SLACK * (box.right - box.left)


def _order(boxes: list[_Box], depth: int = 0) -> list[_Box]:
    if len(boxes) < 2 * MIN_COLUMN_LINES or depth > 4:
        return _rows(boxes)
    gutter = _gutter(boxes)
    if gutter is None:
        return _rows(boxes)
    start, end = gutter
    out: list[_Box] = []
    section: list[_Box] = []

    def flush() -> None:
        for part in _bands(section):
            columns(part)
        section.clear()

    def columns(part: list[_Box]) -> None:
        left = [b for b in part if _left_of(b, start, end)]
        right = [b for b in part if b.left >= end]
        if len(left) < MIN_COLUMN_LINES or len(right) < MIN_COLUMN_LINES:
            out.extend(_rows(part))  # too little on one side: one column here
        elif _is_table([left, right]):
            out.extend(_rows(part))
        else:
            out.extend(_order(left, depth + 1) + _order(right, depth + 1))

    for box in _rows(boxes):
        crosses = box.left < end and not _left_of(box, start, end)
        if crosses:  # crosses the gutter: a section of its own
            flush()
            out.append(box)
        else:
            section.append(box)
    flush()
    return out


def _join_row(left: Line, right: Line) -> Line:
    """One line of two read one after the other on one baseline (table cells of a row)."""
    chars = {left.size: len(left.text), right.size: 0}
    chars[right.size] += len(right.text)
    text_x = right.x if left.text == "•" else left.text_x
    return Line(
        f"{left.text} {right.text}",
        left.page,
        left.x,
        left.y,
        max(chars, key=lambda size: (chars[size], size)),
        left.bold and right.bold,
        left.heading,
        text_x,
    )


def reading_order(lines: list[Line]) -> list[Line]:
    """`lines` of one page (content-stream order) in visual reading order; lines that end
    up side by side on one baseline (the cells of a table row) become one line, as pypdf
    gives the runs of a row drawn one after another."""
    if len(lines) < 2:
        return list(lines)
    out: list[Line] = []
    for box in _order([_box(line) for line in lines]):
        line = box.line
        if out:
            last = out[-1]
            same_row = abs(last.y - line.y) <= BASELINE * max(last.size, line.size, 1.0)
            # A table (one line holding the whole GFM table) is never joined with another.
            if same_row and line.x > last.x and not (last.table or line.table):
                out[-1] = _join_row(last, line)
                continue
        out.append(line)
    return out

"""Tables found by their drawn grid, and the text of each cell, as GFM tables.

A table is a grid of ruling lines: thin filled rectangles (how browsers draw borders),
stroked lines, or the outlines of tiled cell backgrounds (a browser's table with white cells
and no visible borders). Edges that touch form one grid; a grid of at least two rows and two
columns whose cells hold text is a table. The text runs inside it leave the page's lines and
come back as one Markdown table, so its header cells are not headings, its rows not a list,
and the chunker keeps it whole (or splits it by rows with the header repeated).

Chosen over pdfplumber's table finder (see docs/benchmarks.md, "Real folders: lists and
tables"): on the development folders both find the same tables, but pdfplumber parses every
page a second time with pdfminer (about twice our whole conversion time), while the shapes
here come from the pass pypdf already makes for the text.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from shared.pipeline.convert.graphics import Shape

THIN = 2.5  # points: a shape at most this thick is a ruling line
MIN_CELL = 8.0  # points: a box smaller than this on either side is no cell (a bullet, a tick)
MAX_CELL_HEIGHT = 500.0  # taller boxes are page or column backgrounds
SNAP = 2.0  # points: edges this close are one line
MAX_CELL_CHARS = 400  # a cell holding more is a layout box with paragraphs, not a table
MAX_EDGES = 800  # a page of vector art is not searched for tables (bounded time)
_SPACES = re.compile(r"\s+")


class Piece(Protocol):
    text: str
    x: float
    y: float
    size: float
    bold: bool


_P = TypeVar("_P", bound=Piece)  # the caller's own piece type (its lists are given back)


@dataclass
class Table:
    """A table found on a page: rows of cell texts, its left edge, first baseline and size;
    `first` is the index of the first raw line (in content order) that held its text."""

    rows: list[list[str]]
    x: float
    y: float
    size: float
    first: int

    def markdown(self) -> str:
        width = max(len(row) for row in self.rows)
        rows = [row + [""] * (width - len(row)) for row in self.rows]
        out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
        out.extend("| " + " | ".join(row) + " |" for row in rows[1:])
        return "\n".join(out)


@dataclass
class _Edge:
    horizontal: bool
    at: float  # y of a horizontal edge, x of a vertical one
    start: float
    end: float


def _edges(shapes: list[Shape]) -> list[_Edge]:
    edges: list[_Edge] = []
    for s in shapes:
        if s.curved or s.height > MAX_CELL_HEIGHT:
            continue
        w, h = s.width, s.height
        if h <= THIN and w > THIN:
            edges.append(_Edge(True, (s.y0 + s.y1) / 2, s.x0, s.x1))
        elif w <= THIN and h > THIN:
            edges.append(_Edge(False, (s.x0 + s.x1) / 2, s.y0, s.y1))
        elif w >= MIN_CELL and h >= MIN_CELL:
            edges += [
                _Edge(True, s.y0, s.x0, s.x1),
                _Edge(True, s.y1, s.x0, s.x1),
                _Edge(False, s.x0, s.y0, s.y1),
                _Edge(False, s.x1, s.y0, s.y1),
            ]
    return edges


def _merged(edges: list[_Edge]) -> list[_Edge]:
    """Collinear edges that overlap or meet joined into one (tiled cells draw each border
    once per cell, often twice), so a grid has as many edges as it has lines."""
    edges = sorted(edges, key=lambda e: (e.horizontal, round(e.at / SNAP), e.start))
    out: list[_Edge] = []
    for edge in edges:
        last = out[-1] if out else None
        if (
            last is not None
            and last.horizontal == edge.horizontal
            and round(last.at / SNAP) == round(edge.at / SNAP)
            and edge.start <= last.end + SNAP
        ):
            last.end = max(last.end, edge.end)
        else:
            out.append(_Edge(edge.horizontal, edge.at, edge.start, edge.end))
    return out


def _touch(h: _Edge, v: _Edge) -> bool:
    return h.start - SNAP <= v.at <= h.end + SNAP and v.start - SNAP <= h.at <= v.end + SNAP


def _grids(edges: list[_Edge]) -> list[list[_Edge]]:
    """Edges grouped into connected grids (a horizontal and a vertical edge that cross or
    meet are connected)."""
    parent = list(range(len(edges)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    horizontal = [i for i, e in enumerate(edges) if e.horizontal]
    vertical = [i for i, e in enumerate(edges) if not e.horizontal]
    for i in horizontal:
        for j in vertical:
            if _touch(edges[i], edges[j]):
                parent[root(i)] = root(j)
    groups: dict[int, list[_Edge]] = {}
    for i, edge in enumerate(edges):
        groups.setdefault(root(i), []).append(edge)
    return list(groups.values())


def _snap(values: list[float]) -> list[float]:
    out: list[float] = []
    for value in sorted(values):
        if not out or value - out[-1] > SNAP:
            out.append(value)
    return out


def _cell_text(pieces: list[Piece]) -> str:
    """A cell's runs in reading order: same baseline as drawn, lines joined by a space
    (directly after a line-end hyphen)."""
    text = ""
    last_y: float | None = None
    for piece in sorted(pieces, key=lambda p: (-round(p.y), p.x)):
        if last_y is not None and abs(piece.y - last_y) > 0.3 * max(piece.size, 1.0):
            text = text.rstrip()
            text += "" if text.endswith("-") else " "
        text += piece.text
        last_y = piece.y
    return _SPACES.sub(" ", text).strip().replace("|", "\\|")


def _table(grid: list[_Edge], raw_lines: list[list[_P]]) -> Table | None:
    ys = _snap([e.at for e in grid if e.horizontal])[::-1]  # top first
    xs = _snap([e.at for e in grid if not e.horizontal])
    if len(ys) < 3 or len(xs) < 3:
        return None
    verticals = [e for e in grid if not e.horizontal]
    # Per row band, the grid lines that cross it (a merged cell lacks some).
    bounds = [
        [x for x in xs if any(_covers(v, x, (top + bottom) / 2) for v in verticals)]
        for top, bottom in itertools.pairwise(ys)
    ]
    cells: dict[tuple[int, int], list[Piece]] = {}
    first: int | None = None
    taken: list[tuple[int, int]] = []
    for line_index, raw in enumerate(raw_lines):
        for piece_index, piece in enumerate(raw):
            px, py = piece.x + 0.5, piece.y + 0.3 * piece.size
            if not (xs[0] <= px <= xs[-1] and ys[-1] <= py <= ys[0]):
                continue
            row = next(i for i in range(len(ys) - 1) if py >= ys[i + 1])
            left = max((x for x in bounds[row] if x <= px), default=xs[0])
            column = xs.index(left)
            cells.setdefault((row, column), []).append(piece)
            taken.append((line_index, piece_index))
            first = line_index if first is None else min(first, line_index)
    rows = []
    for row in range(len(ys) - 1):
        texts = [_cell_text(cells.get((row, column), [])) for column in range(len(xs) - 1)]
        if any(texts):
            rows.append(texts)
    if first is None or not rows or any(len(text) > MAX_CELL_CHARS for r in rows for text in r):
        return None  # boxes of a page layout (columns of paragraphs) are no table
    # Slivers between two nearly coinciding grid lines hold nothing: left out. Empty
    # columns of real width stay (a form to fill in; the same columns on the next page).
    kept = [
        c
        for c in range(len(xs) - 1)
        if xs[c + 1] - xs[c] >= MIN_CELL or any(row[c] for row in rows)
    ]
    if len(kept) < 2:
        return None
    rows = [[row[c] for c in kept] for row in rows]
    pieces = [p for group in cells.values() for p in group if p.text.strip()]
    size = Counter(round(p.size, 1) for p in pieces).most_common(1)[0][0] if pieces else 0.0
    top = max((p.y for p in pieces), default=ys[0])
    for line_index, piece_index in reversed(taken):  # from the end: the indices stay valid
        del raw_lines[line_index][piece_index]
    return Table(rows, xs[0], top, size, first)


def _covers(edge: _Edge, x: float, y: float) -> bool:
    return abs(edge.at - x) <= SNAP and edge.start - SNAP <= y <= edge.end + SNAP


def take_tables(shapes: list[Shape], raw_lines: list[list[_P]]) -> list[Table]:
    """The tables drawn on a page; their pieces are removed from `raw_lines` (in place,
    lines left empty stay as empty lists)."""
    edges = _merged(_edges(shapes))
    if len(edges) < 6 or len(edges) > MAX_EDGES:
        return []
    tables = []
    for grid in _grids(edges):
        table = _table(grid, raw_lines)
        if table is not None:
            tables.append(table)
    return sorted(tables, key=lambda t: t.first)


class _Block(Protocol):
    kind: str
    lines: list[Any]


def continues_table(block: _Block | None, line: Any) -> bool:
    """Whether the table `line` carries on the table `block` over a page break: the same
    number of columns, on the next page. Its rows are then appended without a header."""
    if block is None or block.kind != "table" or line.page != block.lines[-1].page + 1:
        return False
    first, *rest = line.text.split("\n")
    columns = block.lines[0].text.split("\n", 2)[1]
    if columns != rest[0]:
        return False
    line.text = "\n".join([first, *rest[1:]])
    return True

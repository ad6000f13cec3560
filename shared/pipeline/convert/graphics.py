"""What a PDF page draws besides text: filled and stroked shapes, as boxes in user space.

Browsers and word processors draw list bullets as small filled dots or squares and tables
as thin filled rectangles, stroked lines or tiled cell backgrounds. pypdf's text extraction
already walks every operator of the page and hands each to `visitor_operand_before` with the
current transformation matrix, so the shapes are collected in that same pass (no second parse
of the content stream): path operators build the path, painting operators keep its boxes.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_FILL = frozenset({b"f", b"F", b"f*", b"B", b"B*", b"b", b"b*"})
_STROKE = frozenset({b"S", b"s"})
_PAINT = _FILL | _STROKE | {b"n"}
_PATH = frozenset({b"re", b"m", b"l", b"c", b"v", b"y", b"h"})
_COLOUR = frozenset({b"rg", b"g", b"k", b"sc", b"scn"})
MAX_SHAPES = 5000  # a page of vector art: enough for its tables and bullets, bounded memory


@dataclass(frozen=True)
class Shape:
    """The box of one painted sub-path; y grows upwards. `curved`: drawn with Bézier curves
    (a dot); `white`: filled with white (a cell background, not ink)."""

    x0: float
    y0: float
    x1: float
    y1: float
    filled: bool
    curved: bool = False
    white: bool = False

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0


def _apply(cm: Any, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = cm
    return x * a + y * c + e, x * b + y * d + f


@dataclass
class GraphicsCollector:
    """Receives pypdf's `visitor_operand_before` calls; `shapes` holds what was painted."""

    check: Callable[[], None]
    shapes: list[Shape] = field(default_factory=list)
    operators: int = 0
    _subpaths: list[tuple[list[tuple[float, float]], bool]] = field(default_factory=list)
    _points: list[tuple[float, float]] = field(default_factory=list)
    _curved: bool = False
    _white: bool = False

    def visit(self, operator: bytes, operands: Any, cm: Any, _tm: Any) -> None:
        # Pages with huge content streams and little text call the text visitor rarely.
        self.operators += 1
        if self.operators % 512 == 0:
            self.check()
        if operator in _PATH:
            with contextlib.suppress(TypeError, ValueError):
                self._path(operator, [float(value) for value in operands], cm)
        elif operator in _PAINT:
            self._paint(operator)
        elif operator in _COLOUR:
            self._colour(operator, operands)

    def _path(self, operator: bytes, values: list[float], cm: Any) -> None:
        if operator == b"re" and len(values) == 4:
            x, y, w, h = values
            corners = [_apply(cm, x, y), _apply(cm, x + w, y + h)]
            self._close()
            self._subpaths.append((corners, False))
        elif operator == b"m" and len(values) == 2:
            self._close()
            self._points = [_apply(cm, *values)]
        elif operator == b"h":
            self._close()
        elif len(values) >= 2 and len(values) % 2 == 0:
            if operator != b"l":
                self._curved = True
            self._points.extend(_apply(cm, *values[i : i + 2]) for i in range(0, len(values), 2))

    def _close(self) -> None:
        if len(self._points) > 1:
            self._subpaths.append((self._points, self._curved))
        self._points, self._curved = [], False

    def _paint(self, operator: bytes) -> None:
        self._close()
        if operator != b"n" and len(self.shapes) < MAX_SHAPES:
            filled = operator in _FILL
            for points, curved in self._subpaths:
                xs = [p[0] for p in points]
                ys = [p[1] for p in points]
                box = (min(xs), min(ys), max(xs), max(ys))
                if all(math.isfinite(v) for v in box):
                    self.shapes.append(Shape(*box, filled, curved, filled and self._white))
        self._subpaths = []

    def _colour(self, operator: bytes, operands: Any) -> None:
        try:
            values = [float(value) for value in operands]
        except (TypeError, ValueError):  # a pattern name: not white
            self._white = False
            return
        if operator == b"k":
            self._white = len(values) == 4 and all(v <= 0.02 for v in values)
        else:
            self._white = bool(values) and len(values) in (1, 3) and all(v >= 0.98 for v in values)

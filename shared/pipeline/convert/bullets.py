"""List bullets drawn as shapes, and the nesting of list items by their indent.

A browser prints a `<ul>`'s bullets as small filled dots (level 1), hollow circles (level 2)
or small squares (level 3), not as characters, so the text layer holds no `•` and the items
run together into one paragraph. A bullet is a small, roughly square shape just left of a
line's first glyph, in the band between its baseline and its x-height.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from shared.pipeline.convert.graphics import Shape

if TYPE_CHECKING:
    from shared.pipeline.convert.lines import Line

MIN_BULLET = 1.5  # points: smaller is a speck or a dotted rule
MAX_BULLET = 0.9  # times the line's font size: larger is an icon or a check box
MAX_GAP = 3.5  # times the font size between the bullet's right edge and the text
INDENT_STEP = 4.0  # points: an item this much further right than the one before is nested


def is_bullet_shape(shape: Shape, size: float) -> bool:
    """Small, about as wide as high, and ink (not a white cell background)."""
    w, h = shape.width, shape.height
    return (
        not shape.white
        and MIN_BULLET <= w <= MAX_BULLET * size
        and MIN_BULLET <= h <= MAX_BULLET * size
        and 0.6 <= w / h <= 1.6
    )


def mark_drawn_bullets(lines: list[Line], shapes: list[Shape]) -> int:
    """Give each line that a drawn bullet stands before a `•` (the glyph bullets already
    get), with `x` at the bullet and `text_x` at the words; returns how many were marked."""
    if not shapes or not lines:
        return 0
    marked = 0
    candidates = [s for s in shapes if s.width <= 20 and s.height <= 20]
    if not candidates:
        return 0
    for line in lines:
        if line.text.startswith(("• ", "- ", "– ", "* ")) or not line.size:
            continue
        middle_low, middle_high = line.y - 0.15 * line.size, line.y + 0.75 * line.size
        for shape in candidates:
            centre_y = (shape.y0 + shape.y1) / 2
            gap = line.x - shape.x1
            if (
                -0.5 <= gap <= MAX_GAP * line.size
                and middle_low <= centre_y <= middle_high
                and is_bullet_shape(shape, line.size)
            ):
                line.text = "• " + line.text
                line.text_x = line.x
                line.x = shape.x0
                marked += 1
                break
    return marked


class _ItemBlock(Protocol):
    kind: str
    level: int
    marker: str
    lines: list[Any]


def nest_items(blocks: Sequence[_ItemBlock]) -> None:
    """Set `level` of list items to the indent (in spaces) their nesting needs in Markdown.

    Consecutive items are one list. An item whose bullet stands under the text of the item
    before (right of its bullet by more than INDENT_STEP, and not left of its words) opens a
    sub-list; one further left goes back to the level it matches. Where the item before has
    no known text start apart from its bullet (OCR, a bullet glued to its word), nothing is
    nested: a scan's jitter is no indent. Each level is indented by its parent's marker
    width plus one ("- " = 2).
    """
    stack: list[tuple[float, float | None, int, int]] = []  # bullet x, words x, indent, width
    for block in blocks:
        if block.kind != "item":
            stack = []
            continue
        line = block.lines[0]
        x = line.x
        words = line.text_x if line.text_x is not None and line.text_x > x + 1 else None
        while len(stack) > 1 and x < stack[-1][0] - INDENT_STEP:
            stack.pop()
        top = stack[-1] if stack else None
        if (
            top is not None
            and top[1] is not None
            and x > top[0] + INDENT_STEP
            and x >= top[1] - 1
            and len(stack) < 4
        ):
            indent = top[2] + top[3]
        elif top is not None:
            indent = top[2]
            stack.pop()
        else:
            indent = 0
        stack.append((x, words, indent, len(block.marker) + 1))
        block.level = indent

"""Heading-styled lines with nothing under them that are text, not headings.

A brochure sometimes sets a sentence in its heading style ("If it is still too low, call
your GP.") or ends a box with a bold line at body size (a phone number under a label);
the font rules make them headings, and the next heading, of the same or a higher level,
leaves them empty: a section without text, and a sentence lost from the text around it.
Only these two kinds go back to text: a heading that is a sentence (it ends with a full
stop) and a bold line at body size. A larger, title-like heading with nothing under it
(a title over a section's sub-heading of its level) stays a heading.
"""

from __future__ import annotations

from shared.pipeline.convert.layout import LARGER
from shared.pipeline.convert.lines import Line


def _next_line(pages: list[list[Line]], page: int, index: int) -> Line | None:
    if index + 1 < len(pages[page]):
        return pages[page][index + 1]
    return next((lines[0] for lines in pages[page + 1 :] if lines), None)


def demote_empty_headings(pages: list[list[Line]], body: float) -> None:
    """Make text, in place, of sentence and body-size headings with nothing under them."""
    for page, lines in enumerate(pages):
        for index, line in enumerate(lines):
            if not line.heading or line.table:
                continue
            after = _next_line(pages, page, index)
            if after is None or not after.heading or after.heading > line.heading:
                continue
            sentence = line.text.rstrip().endswith(".") and len(line.text.split()) > 3
            body_size = bool(body) and line.size < body * LARGER
            if sentence or body_size:
                line.heading = 0

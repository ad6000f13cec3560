"""Whether a bold line at body size is a heading, judged by the lines around it.

Bold at body size is a sub-heading in many brochures ("Bijwerkingen", set bold at 11 pt
over 10 pt text), but also a bold sentence inside a paragraph, a bold first line of a list
item or a form label. What tells them apart is the spacing and the text around: a heading
stands apart from the line above it (more than the usual line gap) and the text under it
starts a new sentence; a bold sentence runs on in the paragraph's rhythm, or carries on in
lower case on the next line. A bold line ending in a telephone number ("Zoetermeer:
telefoonnummer (079) 346 2883") is a contact detail set apart, not a heading.
"""

from __future__ import annotations

import re

from shared.pipeline.convert.lines import Line

PHONE_END = re.compile(r"\d(?:[ ()./-]*\d){7,}\W*$")  # eight or more digits close the line
SPACED = 1.1  # a gap above of more than this many usual line gaps sets a heading apart


def bold_body_line_is_heading(lines: list[Line], index: int, usual_gap: float) -> bool:
    """`lines[index]` (bold, about body size) is a heading by its place among `lines`."""
    line = lines[index]
    if PHONE_END.search(line.text):
        return False  # a contact detail
    after = lines[index + 1] if index + 1 < len(lines) else None
    if after is not None and after.page == line.page and after.text[:1].islower():
        return False  # the sentence carries on
    before = lines[index - 1] if index > 0 else None
    if before is None or before.page != line.page or not usual_gap:
        return True
    gap = before.y - line.y
    # In the paragraph's line rhythm under plain text: bold text inside the paragraph.
    return not (0 < gap <= SPACED * usual_gap and not before.bold and before.heading == 0)


def body_is_bold(pages: list[list[Line]], body: float) -> bool:
    """Most text at the body size is bold (a body set in a Medium or Bold font): then bold
    says nothing about headings at that size."""
    bold = total = 0
    for lines in pages:
        for line in lines:
            if abs(line.size - body) <= 0.5:
                total += len(line.text)
                bold += len(line.text) if line.bold else 0
    return bool(total) and bold > total / 2

"""The passage of a hit that matched the query: what a person reads first in a preview.

The chunk may start with overlap from the previous chunk, so its first lines are often not what
was found. The preview is the sentence (or list item, or table row) of the chunk's own text
that shares the most query words (stemmed) with it; among equals, the one whose shared words
are in the fewest of the chunk's sentences; the first one when nothing matches. Measured by
`ingest eval` ("passage shows the answer"). Headings and HTML tags are left out: the citation
names the headings, and tags are markup, not text.
"""

from __future__ import annotations

import re

from shared import sparse

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Inline HTML a crawler left in the page (`<button class="...">`, comments): the preview is
# read by a person. Not autolinks (`<https://...>`): a tag name ends at a space, `/` or `>`.
_HTML = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_OWN_LINE = re.compile(r"^\s*([-*+]|\d+[.)]|\|)")  # list items and table rows stay alone
_MARKER = re.compile(r"^([-*+]|\d+[.)])\s+")


def pieces(text: str) -> list[str]:
    """Sentences, list items and table rows; wrapped paragraph lines joined first."""
    found: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in block.splitlines():
            line = _HTML.sub(" ", line) if "<" in line else line
            if line.lstrip().startswith("#") or not line.strip():
                continue
            if lines and not _OWN_LINE.match(line):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(_MARKER.sub("", line.strip()))
        for line in lines:
            found.extend(s.strip() for s in _SENTENCE_END.split(line) if len(s.strip()) > 2)
    return found


def passage(text: str, query: str, width: int = 240) -> str:
    candidates = pieces(text)
    if not candidates:
        return text.strip()[:width]
    found = [sparse.stems_in_every_language(piece) for piece in candidates]
    # A query word found in fewer of the pieces tells more about which one answers ("met" or
    # "the" is in every sentence): it breaks ties between pieces sharing as many words.
    weighted = []
    for word in dict.fromkeys(sparse.words(query)):  # in order: the same sums every run
        stems = sparse.stems_in_every_language(word)
        pieces_with_it = sum(1 for piece_stems in found if stems & piece_stems)
        if pieces_with_it:
            weighted.append((stems, 1 / pieces_with_it))

    def score(at: int) -> tuple[int, float]:
        shared = [weight for stems, weight in weighted if stems & found[at]]
        return len(shared), sum(shared)

    best = candidates[max(range(len(candidates)), key=score)]  # max keeps the first of equals
    return best if len(best) <= width else best[: width - 1].rstrip() + "…"

"""One passage, one hit: candidates whose text is the same passage collapse into the best one.

Crawled hospital sites repeat whole pages and paragraphs (the same visiting hours on many
pages), and an upload can copy a page that is already indexed. Without collapsing, the top 5
held three copies of one page. The best copy stays (its citation), the others ride along in
`also` (the hit's `also_in`), so five hits are five different passages.

"The same passage" compares the chunk's own text (`anchor.own_text`: without the overlap taken
from the previous chunk), whitespace normalised: the overlap is the neighbour's text, not the
passage, and a repeated paragraph follows different text on different pages. The heading
path is not compared: the same words under another heading still say the same thing, and
the other place is listed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from shared.adapters.index import Candidate
from shared.retrieval.anchor import own_text

if TYPE_CHECKING:  # `rerank` calls `collapse`: no import back at run time
    from shared.retrieval.rerank import Ranked


def passage_key(candidate: Candidate) -> str:
    """What two candidates must share to be one passage: the own text, whitespace normalised."""
    return " ".join(own_text(candidate.payload).split())


def collapse(ranked: Sequence[Ranked]) -> list[Ranked]:
    """`ranked` (best first) with each passage once: the first (best) of its copies, the
    others in its `also`, best first. An empty text is never a duplicate."""
    kept: list[Ranked] = []
    first: dict[str, int] = {}
    for item in ranked:
        key = passage_key(item.candidate)
        if key and key in first:
            best = kept[first[key]]
            copies = (*best.also, item.candidate, *item.also)
            kept[first[key]] = dataclasses.replace(best, also=copies)
            continue
        if key:
            first[key] = len(kept)
        kept.append(item)
    return kept

"""One passage, one hit: candidates with the same own text (whitespace normalised) collapse
into the best, which lists the others; different passages never collapse."""

from __future__ import annotations

import uuid
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from shared.adapters.index import Candidate
from shared.adapters.qdrant_edge import EdgeIndex
from shared.pipeline.embed.hashing import HashingEmbedder
from shared.retrieval.duplicates import collapse, passage_key
from shared.retrieval.memory_index import build
from shared.retrieval.rerank import Ranked, select
from shared.retrieval.search import SearchRequest, search
from shared.settings import Settings


def candidate(text: str, score: float, document: str = "a", offset: int = 0) -> Candidate:
    payload = {
        "text": text,
        "document_id": document,
        "char_start": 0,
        "char_end": len(text) - offset,
        "new_text_offset": offset,
        "chunk_index": 0,
    }
    return Candidate(uuid.uuid4(), payload, score, score, None)


def ranked(*candidates: Candidate) -> list[Ranked]:
    return [Ranked(c, c.score, 0.0) for c in sorted(candidates, key=lambda c: -c.score)]


def test_copies_become_the_best_hit_with_the_others_listed() -> None:
    best = candidate("Bezoek is welkom van 10 tot 20 uur.", 0.9, "a")
    copy = candidate("Bezoek  is welkom\nvan 10 tot 20 uur. ", 0.8, "b")
    other = candidate("Parkeren kan in de garage.", 0.85, "c")
    third = candidate("Bezoek is welkom van 10 tot 20 uur.", 0.7, "d")

    kept = collapse(ranked(best, copy, other, third))

    assert [r.candidate for r in kept] == [best, other]
    assert kept[0].also == (copy, third)  # best first
    assert kept[1].also == ()


def test_the_overlap_from_the_previous_chunk_is_not_the_passage() -> None:
    own = "Bezoek is welkom van 10 tot 20 uur."
    after_a = candidate("Einde van sectie A. " + own, 0.9, "a", offset=len("Einde van sectie A. "))
    after_b = candidate("Iets anders. " + own, 0.8, "b", offset=len("Iets anders. "))
    assert passage_key(after_a) == own
    assert len(collapse(ranked(after_a, after_b))) == 1


def test_empty_texts_are_never_duplicates() -> None:
    kept = collapse(ranked(candidate("", 0.9, "a"), candidate("", 0.8, "b")))
    assert len(kept) == 2


def test_five_hits_are_five_passages_when_copies_fill_the_candidates() -> None:
    page = "Bezoek is welkom van 10 tot 20 uur."
    copies = [candidate(page, 1.0 - n / 100, f"copy-{n}") for n in range(4)]
    others = [candidate(f"Passage {n}.", 0.9 - n / 100, f"other-{n}") for n in range(6)]
    found = copies + others

    assert len({passage_key(r.candidate) for r in select(found, 5, None)}) == 2  # off
    kept = select(found, 5, None, collapse=True)
    assert len({passage_key(r.candidate) for r in kept}) == 5
    assert sum(len(r.also) for r in kept) == 3


texts = st.sampled_from(["Een.", "Twee.", "Drie.", " Een. ", "Een.\n", "Vier vijf."])


@given(st.lists(st.tuples(texts, st.floats(0, 1)), max_size=12))
def test_collapse_keeps_each_passage_once_and_loses_no_candidate(
    items: list[tuple[str, float]],
) -> None:
    found = ranked(*(candidate(t, s, str(n)) for n, (t, s) in enumerate(items)))
    kept = collapse(found)
    keys = [passage_key(r.candidate) for r in kept]
    assert len(keys) == len(set(keys))
    assert sorted(keys) == sorted({passage_key(r.candidate) for r in found})
    every = [c for r in kept for c in (r.candidate, *r.also)]
    assert sorted(c.id for c in every) == sorted(r.candidate.id for r in found)
    for r in kept:  # the kept one is the best of its copies, in the order of `found`
        assert all(passage_key(c) == passage_key(r.candidate) for c in r.also)
        assert all(r.final >= c.score for c in r.also)


def test_a_search_shows_a_copied_page_once_with_also_in(tmp_path: Path) -> None:
    page = (
        "# Bezoektijden\n\n## Algemeen\n\nBezoek is welkom van 10.00 tot 20.00 uur.\n\n"
        "## Kinderen\n\nKinderen onder de twaalf jaar komen met een volwassene.\n"
    )
    (tmp_path / "bezoek.md").write_text(page, encoding="utf-8")
    (tmp_path / "kopie-bezoek.md").write_text(page, encoding="utf-8")
    embedder = HashingEmbedder(64)
    index = EdgeIndex.temporary("eval", 64)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    files = sorted(tmp_path.glob("*.md"))
    _, tokens = build(files, tmp_path, settings, embedder, index)
    other, once = build(files[:1], tmp_path, settings, embedder)
    other.close()
    assert tokens == once  # the copy cost nothing

    question = SearchRequest("Wanneer is bezoek welkom?", top_k=5)
    hits = search(question, settings, embedder=embedder, index=index).hits
    (hit,) = [h for h in hits if "10.00 tot 20.00" in h.new_text]
    assert {hit.external_id, *(a.external_id for a in hit.also_in)} == {
        "bezoek.md",
        "kopie-bezoek.md",
    }
    assert hit.also_in[0].citation.startswith("[")

    plain = SearchRequest("Wanneer is bezoek welkom?", top_k=5, collapse=False)
    copies = search(plain, settings, embedder=embedder, index=index).hits
    assert len([h for h in copies if "10.00 tot 20.00" in h.new_text]) == 2
    assert all(not h.also_in for h in copies)

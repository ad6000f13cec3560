"""Search on a crafted index (real local Qdrant, query embedded by the OpenAI stand-in):
the search's order step by step, every filter, citations, hybrid matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.retrieval.filters import SearchFilters
from shared.retrieval.weak import THRESHOLDS
from tests.support.retrieval import MODEL, Crafted, crafted_index

QUERY = "wat moet ik meenemen naar de opname"


@pytest.fixture
def crafted(tmp_path: Path) -> Crafted:
    with crafted_index(tmp_path, QUERY) as index:
        yield index


def order(result) -> list[str]:
    return [f"{hit.external_id[0]}{hit.chunk_index}" for hit in result.hits]


def seed_004_index(c: Crafted) -> None:
    """Cosines chosen so the proximity boost (anchors A3 and A1, section A > Prep) lifts A5
    from sixth to third and A0 (same document, other section) past C0 and B4."""
    prep, intro = ["A", "Prep"], ["A", "Intro"]
    c.add("a", 3, 0.90, headings=prep)
    c.add("a", 1, 0.88, headings=prep)
    c.add("c", 0, 0.87)
    c.add("b", 4, 0.86)
    c.add("a", 0, 0.85, headings=intro)
    c.add("a", 5, 0.84, headings=prep)
    for n, doc in enumerate("defg"):
        c.add(doc, 0, 0.83 - n * 0.01)
    c.add("h", 0, 0.70)  # eleventh: never a candidate with SEARCH_CANDIDATES=10


def test_candidates_are_the_top_ten_by_cosine(crafted: Crafted) -> None:
    seed_004_index(crafted)
    result = crafted.search(hybrid=False, rerank=False, top_k=10)
    assert result.candidates == 10
    assert sorted(order(result)) == sorted(
        ["a3", "a1", "c0", "b4", "a0", "a5", "d0", "e0", "f0", "g0"]
    )
    by_rank = [
        f"{h.external_id[0]}{h.chunk_index}" for h in sorted(result.hits, key=lambda h: h.rank)
    ]
    assert by_rank[:6] == ["a3", "a1", "c0", "b4", "a0", "a5"]
    assert all(h.dense_score is not None and h.sparse_score is None for h in result.hits)


def test_the_boost_changes_the_order_then_top_five_then_document_order(crafted: Crafted) -> None:
    seed_004_index(crafted)
    plain = crafted.search(hybrid=False, rerank=False)
    assert [
        f"{h.external_id[0]}{h.chunk_index}" for h in sorted(plain.hits, key=lambda h: h.rank)
    ] == ["a3", "a1", "c0", "b4", "a0"]
    reranked = crafted.search(hybrid=False)
    by_rank = [
        f"{h.external_id[0]}{h.chunk_index}" for h in sorted(reranked.hits, key=lambda h: h.rank)
    ]
    assert by_rank == ["a3", "a1", "a5", "a0", "c0"]  # A5 up from sixth, B4 out: top 5
    assert len(reranked.hits) == 5
    assert order(reranked) == ["a0", "a1", "a3", "a5", "c0"]  # document, then chunk index
    boosts = {f"{h.external_id[0]}{h.chunk_index}": h.boost for h in reranked.hits}
    assert boosts["a5"] == pytest.approx(0.15) and boosts["a0"] == pytest.approx(0.05)
    assert boosts["c0"] == 0
    assert reranked.timings_ms.keys() >= {"embed", "candidates", "rerank", "total"}
    assert reranked.query_tokens > 0


def test_each_filter_is_a_payload_filter(crafted: Crafted) -> None:
    c = crafted
    c.add("a", 0, 0.9, headings=["Knie", "Voorbereiding"], tags=["orthopedie"])
    c.add("a", 1, 0.8, headings=["Knie", "Na de operatie"], tags=["orthopedie"])
    c.add("b", 0, 0.85, source="cms", tags=["kinderen"], language="en")
    c.add("c", 0, 0.7, updated_at="2026-06-01T00:00:00+00:00")

    def docs(**filters) -> set[str]:
        flt = SearchFilters.from_dict(filters)
        return {f"{h.external_id[0]}{h.chunk_index}" for h in c.search(filters=flt).hits}

    assert docs() == {"a0", "a1", "b0", "c0"}
    assert docs(document_ids=["a.md"]) == {"a0", "a1"}
    assert docs(document_ids=[c.search().hits[0].document_id]) <= {"a0", "a1", "b0", "c0"}
    b_id = next(h.document_id for h in c.search().hits if h.external_id == "b.md")
    assert docs(document_ids=[b_id]) == {"b0"}
    assert docs(source="cms") == {"b0"}
    assert docs(tags="orthopedie") == {"a0", "a1"}
    assert docs(tags=["kinderen", "orthopedie"]) == {"a0", "a1", "b0"}
    assert docs(language="en") == {"b0"}
    assert docs(heading_prefix="Knie") == {"a0", "a1"}
    assert docs(heading_prefix="Knie > Na de operatie") == {"a1"}
    assert docs(updated_since="2026-03-01T00:00:00Z") == {"c0"}
    with pytest.raises(ValueError, match="unknown filter colour"):
        SearchFilters.from_dict({"colour": "red"})


def test_citations_point_at_the_heading_or_the_pdf_page(crafted: Crafted) -> None:
    c = crafted
    overlap = "Overlap uit het vorige stuk. "
    own = "Neem uw medicijnen mee in de originele verpakking."
    c.add(
        "knie",
        2,
        0.9,
        text=overlap + own,
        title="Knieoperatie",
        headings=["Knieoperatie", "Voorbereiding"],
        source_url="https://zkh.example/knie",
        char_start=500,
        char_end=500 + len(own),
        new_text_offset=len(overlap),
        sections=[  # ranges in the chunk's text: the overlap lies in another section
            {"headings": ["Knieoperatie", "Opname"], "char_start": 0, "char_end": len(overlap)},
            {
                "headings": ["Knieoperatie", "Wat neemt u mee?"],
                "char_start": len(overlap),
                "char_end": len(overlap + own),
            },
        ],
    )
    c.add(
        "brochure",
        4,
        0.8,
        title="Heupoperatie",
        headings=["Heupoperatie", "Na de operatie"],
        source_url="https://zkh.example/heup.pdf",
        page_start=3,
        page_end=4,
    )
    c.add("geen", 0, 0.7, title="Bezoektijden", headings=["Bezoektijden"])
    hits = {h.external_id: h for h in c.search().hits}
    knie = hits["knie.md"]
    assert (
        knie.citation
        == "[Knieoperatie: Wat neemt u mee?](https://zkh.example/knie#wat-neemt-u-mee)"
    )
    assert knie.new_text == own and knie.text.startswith(overlap)
    pdf = hits["brochure.md"]
    assert pdf.citation == "[Heupoperatie: Na de operatie](https://zkh.example/heup.pdf#page=3)"
    assert (pdf.page_start, pdf.page_end) == (3, 4)
    assert hits["geen.md"].citation == "[Bezoektijden]"


def test_hybrid_finds_the_exact_drug_name_that_dense_only_misses(crafted: Crafted) -> None:
    c = crafted
    for n in range(30):
        c.add(f"doc{n}", 0, 0.5 - n * 0.005, text=f"Algemene informatie over bloedverdunners {n}.")
    target = "Gebruikt u acenocoumarol of fenprocoumon? Stop dan vijf dagen voor de operatie."
    c.add("trombose", 0, 0.05, text=target, headings=["Trombosedienst"])
    dense = c.search(query="acenocoumarol", hybrid=False)
    assert all(h.external_id != "trombose.md" for h in dense.hits)
    hybrid = c.search(query="acenocoumarol")
    assert hybrid.hybrid
    found = [h for h in hybrid.hits if h.external_id == "trombose.md"]
    assert found and found[0].sparse_score and found[0].sparse_score > 0
    assert found[0].rank <= 2  # RRF: first of the sparse list ties with first of the dense
    # Accents and case fold, and the Dutch stemmer joins word forms.
    assert any(h.external_id == "trombose.md" for h in c.search(query="ACENOCOUMARÓL").hits)


def test_bad_queries_are_refused(crafted: Crafted) -> None:
    from shared.retrieval.search import QueryError

    with pytest.raises(QueryError, match="empty"):
        crafted.search(query="   ")
    with pytest.raises(QueryError, match="at most 1000"):
        crafted.search(query="x" * 1001)


def test_hybrid_hits_carry_the_dense_and_sparse_scores_of_their_own_vectors(
    crafted: Crafted,
) -> None:
    """One fused query: the per-hit scores come from the hits' vectors, not extra lists."""
    from shared import sparse
    from shared.pipeline import indexing

    c = crafted
    seed_004_index(c)
    c.add("trombose", 0, 0.05, text="Stop acenocoumarol vijf dagen voor de opname.", headings=[])
    dense = {h.point_id: h.dense_score for h in c.search(hybrid=False, top_k=10).hits}
    hybrid = c.search(hybrid=True, top_k=10)
    assert hybrid.hybrid
    both = [h for h in hybrid.hits if h.point_id in dense]
    assert both  # the dense list's cosine, recomputed from the hit's own vector
    for hit in both:
        assert hit.dense_score == pytest.approx(dense[hit.point_id], abs=1e-5)
    target = next(h for h in hybrid.hits if h.external_id == "trombose.md")
    query = sparse.query_vector(QUERY)
    terms = indexing.sparse_vector(
        {"text": "Stop acenocoumarol vijf dagen voor de opname.", "headings": [], "language": "nl"}
    )
    stored = dict(zip(terms.indices, terms.values, strict=True))
    expected = sum(stored[i] for i in query.indices if i in stored)
    assert target.sparse_score == pytest.approx(expected)
    assert all(h.sparse_score is None for h in hybrid.hits if h.external_id[0] in "bcdefg")


@pytest.mark.parametrize("hybrid", [False, True])
def test_hidden_points_are_left_out_of_every_search(crafted: Crafted, hybrid: bool) -> None:
    # Three passages (identical texts would be one hit: SEARCH_COLLAPSE_DUPLICATES).
    crafted.add("a", 0, 0.9, "knie operatie bloedverdunner", hidden=True)
    crafted.add("b", 0, 0.8, "knie operatie bloedverdunner stoppen", hidden=False)
    crafted.add("c", 0, 0.7, "knie operatie bloedverdunner vooraf")  # before the field: visible
    result = crafted.search(query=QUERY, hybrid=hybrid, rerank=False)
    assert sorted(h.external_id for h in result.hits) == ["b.md", "c.md"]
    language = crafted.search(
        query=QUERY, hybrid=hybrid, filters=SearchFilters(language="nl"), rerank=False
    )
    assert sorted(h.external_id for h in language.hits) == ["b.md", "c.md"]


def test_hits_below_the_weak_threshold_are_marked_and_all_weak_is_no_good_answer(
    tmp_path: Path,
) -> None:
    """A hit is weak by its own cosine; the search is weak when every hit is."""
    with crafted_index(tmp_path, QUERY, search_weak_threshold=0.5) as c:
        c.add("a", 0, 0.62)
        c.add("b", 0, 0.41)
        c.add("c", 0, 0.30)
        result = c.search(hybrid=False)
        assert {h.external_id: h.weak for h in result.hits} == {
            "a.md": False,
            "b.md": True,
            "c.md": True,
        }
        assert result.weak is False and result.weak_threshold == 0.5
        assert result.to_dict()["weak"] is False
        assert [h["weak"] for h in result.to_dict()["hits"]] == [h.weak for h in result.hits]
    with crafted_index(tmp_path / "strict", QUERY, search_weak_threshold=0.7) as c:
        c.add("a", 0, 0.62)
        c.add("b", 0, 0.41)
        result = c.search(hybrid=False)
        assert result.weak is True and all(h.weak for h in result.hits)


def test_an_empty_answer_is_weak_and_the_model_gives_the_threshold(tmp_path: Path) -> None:
    with crafted_index(tmp_path, QUERY) as c:  # the stand-in's model: OpenAI's value
        assert c.search().weak is True  # nothing indexed: nothing answers
        c.add("a", 0, 0.05)
        result = c.search()
        assert result.weak_threshold == THRESHOLDS[MODEL] and result.weak is True

"""`ingest eval`'s "passage shows the answer": the preview a person reads first."""

from __future__ import annotations

from shared.retrieval.evaluate import Question, answers, shows_answer
from shared.retrieval.hits import Hit


def hit_showing(passage: str) -> Hit:
    return Hit(
        rank=1,
        point_id="p",
        document_id="d",
        external_id="knie.md",
        chunk_index=0,
        title="Knie",
        source="upload",
        source_url=None,
        language="nl",
        tags=[],
        headings=["Knie"],
        token_count=10,
        text=passage,
        new_text=passage,
        passage=passage,
        page_start=None,
        page_end=None,
        dense_score=None,
        sparse_score=None,
        fused_score=0.0,
        boost=0.0,
        final_score=0.0,
        citation="[Knie](#)",
        citation_url=None,
        section=None,
    )


QUESTION = Question(
    "Wanneer stop ik met bloedverdunners?",
    "knie.md",
    ["Gebruikt u bloedverdunners? Dan hoort u van de anesthesioloog wanneer u daarmee stopt."],
)


def test_a_passage_that_is_part_of_an_answer_shows_it() -> None:
    assert shows_answer(
        hit_showing("Dan hoort u van de  anesthesioloog wanneer u daarmee stopt."), QUESTION
    )
    assert shows_answer(hit_showing("Gebruikt u bloedverdunners?"), QUESTION)


def test_a_cut_passage_counts_by_what_it_shows_and_another_sentence_does_not() -> None:
    assert shows_answer(hit_showing("Dan hoort u van de anesthesioloog…"), QUESTION)
    assert not shows_answer(hit_showing("Stop twee weken voor de operatie met roken."), QUESTION)
    assert not shows_answer(hit_showing(""), QUESTION)


def test_a_quote_from_the_pdf_matches_the_chunk_whatever_its_markdown() -> None:
    # Answers are quoted from the folder's text; the chunk is our converter's Markdown.
    question = Question("Wat is een CT-scan?", "knie.md", ["De CT-scanner maakt foto’s."])
    assert answers(hit_showing("De **CT\\-scanner** maakt\nfoto’s."), question)
    assert answers(hit_showing("De CT-scan\xadner maakt foto’s."), question)
    assert not answers(hit_showing("De MRI-scanner maakt foto’s."), question)

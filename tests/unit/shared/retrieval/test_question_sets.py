"""The shipped question sets: every answer is an exact sentence (or list item, or table row)
of the document it names, whitespace aside, so `ingest eval` measures retrieval, not typos."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.retrieval.evaluate import load_questions, normalised

ROOT = Path(__file__).resolve().parents[4]
SETS = [(ROOT / "examples", 20), (ROOT / "tests" / "corpus", 80)]


@pytest.mark.parametrize(("folder", "at_least"), SETS, ids=["examples", "test-corpus"])
def test_every_answer_is_in_its_document(folder: Path, at_least: int) -> None:
    questions = load_questions(folder / "questions.jsonl")
    assert len(questions) >= at_least
    documents = {p.name: p for p in folder.rglob("*") if p.suffix in {".md", ".pdf"}}
    for q in questions:
        assert q.document in documents, q.document
        path = documents[q.document]
        if path.suffix == ".pdf":
            from shared.pipeline.convert import convert

            text = convert(path.read_bytes(), "application/pdf").markdown
        else:
            text = path.read_text(encoding="utf-8")
        for answer in q.answers:
            assert normalised(answer) in normalised(text), (q.question, answer)


def test_the_corpus_set_asks_in_english_and_dutch() -> None:
    questions = load_questions(ROOT / "tests" / "corpus" / "questions.jsonl")
    dutch = [q for q in questions if q.document.startswith(("nl_", "includes_", "questions_nl"))]
    assert len(dutch) >= 15 and len(questions) - len(dutch) >= 60

"""`ingest search`, `ingest verify` and `ingest reindex` with sparse vectors, on the embedded
default (SQLite, Celery in-process, local Qdrant, hashing embedder)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shared.adapters.index import Point
from shared.pipeline import wiring
from shared.settings import get_settings
from tests.support.paths import ROOT
from worker.app import app as celery_app
from worker.app import configure
from worker.cli.main import app

runner = CliRunner()


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """As in test_embedded: SQLite and local Qdrant in tmp_path, hashing embedder."""
    for name in ("REDIS_URL", "OPENAI_API_KEY", "QDRANT_URL", "QDRANT_COLLECTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/ingest.db")
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "hashing")
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()
    configure(celery_app, get_settings())


def search_json(*args: str) -> dict:
    result = runner.invoke(app, ["search", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_search_shows_citations_and_the_passage_that_matched(embedded: Path) -> None:
    run = ["run", str(ROOT / "examples"), "--id-prefix", "examples/"]
    assert runner.invoke(app, run).exit_code == 0
    result = runner.invoke(app, ["search", "acenocoumarol apixaban clopidogrel"])
    assert result.exit_code == 0, result.output
    # cited where the passage lies (### Medicijnen), not the chunk's majority (Voorbereiding)
    assert "[Knieoperatie (totale knieprothese): Medicijnen](https://" in result.stdout
    assert "Gebruikt u bloedverdunners, zoals acenocoumarol" in result.stdout

    body = search_json("acenocoumarol", "--top-k", "3")
    assert len(body["hits"]) == 3 and body["hybrid"]
    for hit in body["hits"]:
        # never the overlap taken from before (wrapped lines are joined in the passage)
        assert " ".join(hit["passage"].split()) in " ".join(hit["new_text"].split())
    overlapping = [h for h in body["hits"] if h["new_text"] != h["text"]]
    assert overlapping, "the examples have chunks with overlap"
    pdf = search_json("heupoperatie", "--filter", "document_ids=examples/heupoperatie-brochure.pdf")
    assert pdf["hits"] and all(h["page_start"] for h in pdf["hits"])
    assert all(h["external_id"].endswith(".pdf") for h in pdf["hits"])
    answered = search_json("Moet ik stoppen met roken voor mijn knieoperatie?")
    assert answered["weak"] is False and any(not hit["weak"] for hit in answered["hits"])
    absent = runner.invoke(app, ["search", "How long does recovery after cataract surgery take?"])
    assert absent.exit_code == 0 and "no good answer" in absent.output
    assert " weak  [" in absent.stdout
    refused = runner.invoke(app, ["search", "x", "--filter", "colour=red"])
    assert refused.exit_code == 2 and "unknown filter colour" in refused.output


def test_verify_fails_on_a_point_without_a_sparse_vector(embedded: Path) -> None:
    assert runner.invoke(app, ["run", str(ROOT / "examples")]).exit_code == 0
    assert runner.invoke(app, ["verify"]).exit_code == 0
    settings = get_settings()
    index = wiring.index_for(settings, wiring.embedder(settings))
    (point,) = index.retrieve([next(iter(index.all_point_ids()))])
    index.upsert([Point(point.id, point.vector, point.payload)])  # dense vector only
    result = runner.invoke(app, ["verify"])
    assert result.exit_code == 1
    assert "points without a sparse vector: 1" in result.output


def eval_json(*args: str) -> dict:
    result = runner.invoke(app, ["eval", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_eval_on_the_live_index_and_on_a_throwaway_one(embedded: Path) -> None:
    questions = str(ROOT / "examples" / "questions.jsonl")
    corpus = str(ROOT / "examples")
    in_memory = eval_json(questions, "--corpus", corpus)
    assert in_memory["questions"] == 22
    assert in_memory["recall_at_1"] <= in_memory["recall_at_5"] <= in_memory["recall_at_10"]
    assert in_memory["recall_at_10"] >= 0.9 and 0 < in_memory["mrr"] <= 1
    assert all(miss["best_chunk"] for miss in in_memory["misses"])
    # The previews of most answering hits show an answer sentence (16 of 22 when measured).
    assert 0.6 <= in_memory["passage_shows_answer"] <= 1

    small = eval_json(
        questions,
        "--corpus",
        corpus,
        "--set",
        "CHUNK_TARGET_TOKENS=60",
        "--set",
        "CHUNK_MAX_TOKENS=90",
        "--set",
        "CHUNK_OVERLAP_TOKENS=10",
        "--budget",
        "200",
    )
    assert small["mean_context_tokens"] < in_memory["mean_context_tokens"]
    assert small["budget"] == 200

    assert runner.invoke(app, ["run", corpus]).exit_code == 0
    live = eval_json(questions)  # the live index: same documents, same settings
    assert live["recall_at_10"] == in_memory["recall_at_10"]
    table = runner.invoke(app, ["eval", questions])
    assert table.exit_code == 0 and "recall@5" in table.stdout


def test_eval_counts_the_weak_marks_on_absent_and_answerable_questions(embedded: Path) -> None:
    """With the absent questions, `ingest eval` reports how many weak marks are right at the
    model's threshold and a sweep; the recall figures count the answerable questions only."""
    answerable = str(ROOT / "examples" / "questions.jsonl")
    absent = str(ROOT / "examples" / "questions-absent.jsonl")
    corpus = str(ROOT / "examples")
    alone = eval_json(answerable, "--corpus", corpus)
    assert alone["weak"] is None
    both = eval_json(answerable, absent, "--corpus", corpus)
    assert {k: both[k] for k in ("questions", "recall_at_5", "mrr")} == {
        k: alone[k] for k in ("questions", "recall_at_5", "mrr")
    }
    weak = both["weak"]
    assert (weak["answerable"], weak["absent"]) == (22, 22)
    assert weak["threshold"] == 0.078  # the hashing embedder's measured value
    row = weak["at_threshold"]
    # Measured: 5 of 22 absent questions marked weak, 1 of 22 answerable ones (cautious);
    # the best balance 14 and 3 (at 0.12).
    assert row["absent_weak"] >= 4 and row["answerable_weak"] <= 1
    assert weak["cautious"]["answerable_weak"] <= 1
    assert weak["suggested"]["absent_weak"] > row["absent_weak"]
    assert len(weak["sweep"]) >= 5 and weak["sweep"] == sorted(
        weak["sweep"], key=lambda r: r["threshold"]
    )
    stricter = eval_json(answerable, absent, "--corpus", corpus, "--set", "SEARCH_WEAK_THRESHOLD=1")
    assert stricter["weak"]["at_threshold"]["absent_weak"] == 22
    assert stricter["weak"]["at_threshold"]["answerable_weak"] == 22
    table = runner.invoke(app, ["eval", answerable, absent, "--corpus", corpus])
    assert table.exit_code == 0 and "no good answer" in table.stdout
    assert "best balance" in table.stdout and "cautious" in table.stdout

"""A citation points at the passage that matched: the section and page of the hit's best
sentence, not the chunk's majority section or first page. The real pipeline
on the embedded default (`ingest run`, then `ingest search`), as test_retrieval_cmds does."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shared.settings import get_settings
from tests.support.pdfs import _canvas, _Writer
from worker.app import app as celery_app
from worker.app import configure
from worker.cli.main import app

HOME = (
    "Thuis mag u het geopereerde been gewoon belasten, tenzij de arts iets anders zegt. "
    "Loop de eerste weken met krukken of een rollator en bouw het lopen rustig op. "
    "Slaap de eerste zes weken op uw rug met een kussen tussen de knieen. Zit niet op een "
    "lage stoel en buk niet diep. Een verhoogde toiletbril helpt daarbij. Douchen mag als "
    "de wond droog is; in bad gaan of zwemmen mag pas als de wond helemaal dicht is."
)


def hip_pdf() -> bytes:
    """One short section, then a longer one that runs on to page 2: a single chunk, most of
    it "Herstel thuis", on pages 1 and 2."""
    buffer = io.BytesIO()
    writer = _Writer(_canvas(buffer, title="Heupoperatie"))
    writer.heading("Heupoperatie", 1)
    writer.heading("De operatie", 2)
    writer.paragraph("U krijgt een ruggenprik. De operatie duurt ongeveer een uur.")
    writer.heading("Herstel thuis", 2)
    writer.paragraph(HOME)
    writer.finish_page()
    writer.paragraph("Na zes weken mag u weer autorijden, als u het been goed kunt bewegen.")
    writer.finish_page()
    writer.canvas.save()
    return buffer.getvalue()


runner = CliRunner()


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`hip_pdf` run through the pipeline: SQLite, local Qdrant, the hashing embedder."""
    for name in ("REDIS_URL", "OPENAI_API_KEY", "QDRANT_URL", "QDRANT_COLLECTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/ingest.db")
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "hashing")
    get_settings.cache_clear()
    folder = tmp_path / "folders"
    folder.mkdir()
    (folder / "heup.pdf").write_bytes(hip_pdf())
    result = runner.invoke(app, ["run", str(folder)])
    assert result.exit_code == 0, result.output
    yield folder
    get_settings.cache_clear()
    configure(celery_app, get_settings())


def best_hit(query: str) -> dict:
    result = runner.invoke(app, ["search", query, "--json"])
    assert result.exit_code == 0, result.output
    return min(json.loads(result.stdout)["hits"], key=lambda hit: hit["rank"])


def test_the_section_is_the_one_the_matching_sentence_is_in(indexed: Path) -> None:
    hit = best_hit("hoe lang duurt de operatie")
    assert hit["passage"] == "De operatie duurt ongeveer een uur."
    assert hit["headings"][-1] == "De operatie" and "Herstel thuis" in hit["new_text"]
    assert hit["section"] == "De operatie"  # not the chunk's majority, "Herstel thuis"
    assert hit["citation"] == "[Heupoperatie: De operatie, p. 1]"


def test_a_pdf_citation_names_the_page_of_the_matching_sentence(indexed: Path) -> None:
    hit = best_hit("wanneer mag ik weer autorijden")
    assert hit["passage"].startswith("Na zes weken mag u weer autorijden")
    assert (hit["page_start"], hit["page_end"]) == (1, 2)
    assert hit["citation"] == "[Heupoperatie: Herstel thuis, p. 2]"

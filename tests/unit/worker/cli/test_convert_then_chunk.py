"""`ingest convert` of a brochure, then `ingest chunk`: sections and pages survive the trip."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.support.pdfs import BROCHURE_HEADING_PATHS, BROCHURE_SECTIONS, brochure_pdf
from worker.cli.main import app

runner = CliRunner()


def chunks_of(path: Path) -> list[dict]:
    result = runner.invoke(app, ["chunk", "--json", str(path)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_brochure_converts_then_chunks_along_its_sections_with_pages(tmp_path: Path) -> None:
    pdf = tmp_path / "brochure.pdf"
    pdf.write_bytes(brochure_pdf())
    converted = runner.invoke(app, ["convert", str(pdf)])
    assert converted.exit_code == 0, converted.output
    markdown = tmp_path / "brochure.md"
    markdown.write_text(converted.stdout)

    from_pdf = chunks_of(pdf)
    from_markdown = chunks_of(markdown)
    paths = [chunk["headings"] for chunk in from_pdf]
    assert paths == [chunk["headings"] for chunk in from_markdown]
    assert all(path in BROCHURE_HEADING_PATHS for path in paths)
    # Every section's heading path appears, at least as the start of a chunk.
    nearest = {tuple(path) for path in paths}
    assert {("Knieoperatie", "Contact"), ("Knieoperatie", "Voorbereiding")} <= nearest

    page_of = {heading: page for _, heading, page in BROCHURE_SECTIONS}
    for chunk in from_pdf:
        first, last = chunk["pages"]
        assert 1 <= first <= last <= 5
        assert first >= page_of[chunk["headings"][-1]]  # text sits at or after its heading
    assert from_pdf[-1]["pages"] == [5, 5]  # "Contact" is on page 5, after the blank page
    assert all(chunk["pages"] is None for chunk in from_markdown)

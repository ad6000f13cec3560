"""Identical text is embedded once and shown once (issue 29, item 3), through `ingest run` on
the embedded default: ingest a folder, copy half of its pages under other names, ingest
again: the copies cost 0 tokens, and a search on a copied passage returns it once, with the
copy in `also_in`."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from shared import repository as repo
from shared.db import transaction
from tests.support.paths import CORPUS
from worker.cli.main import app

runner = CliRunner()


def summary(output: str) -> dict[str, int]:
    return {m[0]: int(m[1]) for m in re.findall(r"│ ([a-z ]+?)\s+│ (\d+)\s+│", output)}


def longest_paragraph(page: Path) -> str:
    """A copied page's longest plain paragraph: a passage to ask for."""
    lines = page.read_text(encoding="utf-8").splitlines()
    return max((line for line in lines if line and line[0].isalpha()), key=len)


def test_copied_pages_cost_nothing_and_are_found_once(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "site"
    shutil.copytree(CORPUS / "nhs-conditions", folder)
    pages = sorted(folder.glob("*.md"))
    first = runner.invoke(app, ["run", str(folder)])
    assert first.exit_code == 0, first.output
    assert summary(first.stdout)["indexed"] == len(pages) and summary(first.stdout)["tokens spent"]

    copied = pages[::2]
    for page in copied:
        shutil.copyfile(page, folder / f"kopie-{page.name}")
    second = runner.invoke(app, ["run", str(folder)])

    assert second.exit_code == 0, second.output
    counts = summary(second.stdout)
    assert counts["indexed"] == len(copied) and counts["unchanged"] == len(pages)
    assert counts["tokens spent"] == 0, second.stdout  # not one token for the copies
    with transaction() as session:
        listed, _ = repo.list_documents(session, limit=100)
        ids = [d.current_version_id for d, _ in listed if Path(d.external_id).name[:6] == "kopie-"]
        copies = repo.versions_by_id(session, [i for i in ids if i is not None])
        assert len(copies) == len(copied)
        assert all(v.tokens_spent == 0 and v.chunks_embedded == 0 for v in copies)
        assert all(v.chunk_count for v in copies)

    original = copied[-1]
    passage = longest_paragraph(original)
    found = runner.invoke(app, ["search", passage, "--json"])
    assert found.exit_code == 0, found.output
    hits = [hit for hit in json.loads(found.stdout)["hits"] if passage in hit["new_text"]]
    assert len(hits) == 1, found.stdout  # once, not once per copy
    (hit,) = hits
    names = {hit["external_id"], *(other["external_id"] for other in hit["also_in"])}
    assert {Path(name).name for name in names} == {original.name, f"kopie-{original.name}"}
    assert hit["also_in"][0]["citation"].startswith("[")
    shown = runner.invoke(app, ["search", passage])  # the text output names the copies too
    assert "also in: [" in shown.stdout, shown.stdout

"""`ingest chunk` through typer's CliRunner on the real app."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from shared.pipeline.chunk import chunk_markdown
from tests.support.paths import CORPUS
from worker.cli.main import app

runner = CliRunner()
SHINGLES = CORPUS / "nhs-conditions" / "shingles.md"


def test_json_lines_carry_the_chunk_fields() -> None:
    result = runner.invoke(app, ["chunk", "--json", str(SHINGLES)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    expected = chunk_markdown(SHINGLES.read_text(encoding="utf-8"))
    assert len(records) == len(expected) > 1
    for record, chunk in zip(records, expected, strict=True):
        assert record["file"] == str(SHINGLES)
        assert record["text"] == chunk.text and record["token_count"] == chunk.token_count
        assert record["headings"] == chunk.headings and record["kinds"] == chunk.kinds
        assert (record["char_start"], record["char_end"]) == (chunk.char_start, chunk.char_end)
        assert record["overlap_tokens"] == chunk.overlap_tokens
        assert record["sections"] == chunk.sections and record["sections"]
        assert record["pages"] is None
        assert record["metadata"]["title"] == "Shingles"


def test_human_view_lists_each_chunk(tmp_path: Path) -> None:
    (tmp_path / "knie.md").write_text("# Knieoperatie\n\nNeem uw identiteitskaart mee.\n")
    (tmp_path / "skip.png").write_bytes(b"\x89PNG")
    result = runner.invoke(app, ["chunk", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "knie.md (1 chunk)" in result.stdout
    assert "Knieoperatie" in result.stdout and "skip.png" not in result.stdout


def test_folder_is_walked_recursively(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.md").write_text("# One\n\ntext one")
    (tmp_path / "two.txt").write_text("text two")
    result = runner.invoke(app, ["chunk", "--json", str(tmp_path)])
    assert result.exit_code == 0, result.output
    files = [Path(json.loads(line)["file"]).name for line in result.stdout.splitlines()]
    assert files == ["one.md", "two.txt"]


def test_a_bad_file_is_reported_and_the_others_still_chunked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00 not utf-8 \xc3")
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nfine")
    missing = tmp_path / "missing.md"
    result = runner.invoke(app, ["chunk", "--json", str(bad), str(good), str(missing)])
    assert result.exit_code == 1
    assert "bad.md: The file is not readable as UTF-8 text" in result.stderr
    assert "missing.md: cannot read the file" in result.stderr
    assert "Traceback" not in result.stderr
    assert [json.loads(line)["file"] for line in result.stdout.splitlines()] == [str(good)]

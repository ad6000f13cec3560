"""`ingest convert` through the real console script entry point (typer's runner)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from tests.support import pdfs
from worker.cli.main import app

runner = CliRunner()


def test_convert_prints_the_markdown(tmp_path: Path) -> None:
    path = tmp_path / "knie.pdf"
    path.write_bytes(pdfs.brochure_pdf())
    result = runner.invoke(app, ["convert", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# Knieoperatie\n")
    assert "## Voorbereiding" in result.stdout
    assert "warning:" not in result.stdout  # warnings go to stderr


def test_convert_json_has_page_map_metadata_and_warnings(tmp_path: Path) -> None:
    path = tmp_path / "knie.pdf"
    path.write_bytes(pdfs.brochure_pdf())
    result = runner.invoke(app, ["convert", "--json", str(path)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {"markdown", "page_starts", "metadata", "warnings"}
    assert [page for _, page in payload["page_starts"]] == [1, 2, 3, 5]
    headings = re.findall(r"^#+ (.+)$", payload["markdown"], re.M)
    assert headings == [text for _, text, _ in pdfs.BROCHURE_SECTIONS]
    assert payload["metadata"]["page_count"] == 5
    assert any("page 4" in warning for warning in payload["warnings"])


def test_convert_markdown_file(tmp_path: Path) -> None:
    path = tmp_path / "page.md"
    path.write_bytes(b"\xef\xbb\xbf# Titel\r\n\r\nTekst.\r\n")
    result = runner.invoke(app, ["convert", str(path)])
    assert result.exit_code == 0
    assert result.stdout == "# Titel\n\nTekst.\n"


def test_convert_failure_prints_code_and_message_and_exits_non_zero(tmp_path: Path) -> None:
    path = tmp_path / "geheim.pdf"
    path.write_bytes(pdfs.encrypted_pdf())
    result = runner.invoke(app, ["convert", str(path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error [pdf_encrypted]: This PDF is password-protected.")
    assert "Traceback" not in result.output


def test_convert_refuses_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "brief.pdf"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    result = runner.invoke(app, ["convert", str(path)])
    assert result.exit_code == 1
    assert "error [unsupported_media_type]" in result.stderr

"""Markdown and text conversion, media type sniffing, and refusals that apply to every type."""

from __future__ import annotations

import pytest

from shared.errors import PermanentError
from shared.pipeline.convert import convert, detect_media_type
from shared.settings import Settings
from tests.support import pdfs

MARKDOWN = "---\ntitle: Knie\n---\n# Knieoperatie\n\nNeem uw *identiteitskaart* mee.\n"


def test_markdown_is_kept_as_is() -> None:
    converted = convert(MARKDOWN.encode(), "text/markdown", "knie.md")
    assert converted.markdown == MARKDOWN
    assert converted.page_starts == []
    assert converted.pages_for(0, 10) is None
    assert converted.warnings == []


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + MARKDOWN.encode(),
        MARKDOWN.replace("\n", "\r\n").encode(),
        MARKDOWN.replace("\n", "\r").encode(),
        MARKDOWN.encode("utf-16"),  # with its BOM
        MARKDOWN.encode("utf-16-be").join([b"\xfe\xff", b""]),
    ],
    ids=["utf8-bom", "crlf", "cr", "utf16-le-bom", "utf16-be-bom"],
)
def test_bom_and_line_endings_are_normalised(data: bytes) -> None:
    assert convert(data, "text/markdown; charset=utf-8").markdown == MARKDOWN


def test_non_ascii_survives() -> None:
    text = "# Patiënt\n\nCafé, één, 日本語 and 🙂\n"
    assert convert(text.encode(), "text/plain").markdown == text


def test_legacy_encoding_is_refused_with_a_fix() -> None:
    data = "# Knie\n\nPatiënten\n".encode("cp1252")
    with pytest.raises(PermanentError) as info:
        convert(data, detect_media_type(data, "knie.md"))
    assert info.value.code == "undecodable_text"
    assert "line 3" in info.value.message and "UTF-8" in info.value.message


def test_utf16_without_bom_is_refused() -> None:
    with pytest.raises(PermanentError) as info:
        convert("# Knie\n".encode("utf-16-le"), "text/markdown")
    assert info.value.code == "undecodable_text"


def test_unsupported_type_names_what_it_looks_like() -> None:
    with pytest.raises(PermanentError) as info:
        convert(b"PK\x03\x04" + b"\x00" * 100, "application/octet-stream", "brief.docx")
    assert info.value.code == "unsupported_media_type"
    assert "Word" in info.value.message


def test_too_large_is_refused_before_reading() -> None:
    with pytest.raises(PermanentError) as info:
        convert(b"# x\n" * 1000, "text/markdown", settings=Settings(max_upload_bytes=100))
    assert info.value.code == "too_large"
    assert "MB" in info.value.message


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (pdfs.brochure_pdf(), "brochure.md", "application/pdf"),
        (b"\r\n  %PDF-1.4 ...", None, "application/pdf"),
        (b"\x00\x01junk%PDF-1.4\n", "x", "application/pdf"),
        (MARKDOWN.encode(), "knie.md", "text/markdown"),
        (MARKDOWN.encode(), "knie.txt", "text/plain"),
        (MARKDOWN.encode(), None, "text/markdown"),
        ("# Über\n".encode("utf-16"), "a.md", "text/markdown"),
        (b"Een tekst over PDF's: %PDF-1.7 staat bovenaan.\n", "a.md", "text/markdown"),
        ("Patiënten".encode("cp1252"), "a.md", "text/markdown"),  # convert explains the fix
        (b"", "empty.md", "text/markdown"),
        (b"PK\x03\x04\x14\x00\x06\x00", "brief.docx", "application/octet-stream"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "scan.pdf", "application/octet-stream"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "foto.md", "application/octet-stream"),
        (b"MZ\x90\x00\x03\x00\x00\x00", "setup.md", "application/octet-stream"),
        (b"\x7fELF\x02\x01\x01", None, "application/octet-stream"),
        (b"{\\rtf1\\ansi Hallo}", "brief.md", "application/octet-stream"),
        (bytes(range(256)) * 8, "random.md", "application/octet-stream"),
        ("# Knie\n".encode("utf-16-le"), "knie.md", "application/octet-stream"),
    ],
)
def test_detect_media_type_sniffs_the_bytes(data: bytes, name: str | None, expected: str) -> None:
    assert detect_media_type(data, name) == expected


def test_detect_media_type_reads_only_the_head() -> None:
    data = ("x" * 10_000).encode() + b"\xff\xfe\x00 binary tail"
    assert detect_media_type(data, "big.md") == "text/markdown"
    # A multi-byte character cut at the sniffing boundary does not make text binary.
    data = ("é" * 10_000).encode()
    assert detect_media_type(data, "accents.md") == "text/markdown"

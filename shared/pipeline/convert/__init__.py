"""Conversion: uploaded bytes (Markdown, plain text, PDF) to Markdown plus a page map.

Markdown and text are decoded and otherwise kept as they are (the chunker parses them);
PDFs go through `shared.pipeline.convert.pdf`. Every refusal is a PermanentError with a stable code.
"""

from __future__ import annotations

import bisect
import codecs
from dataclasses import dataclass, field

from shared.errors import PermanentError
from shared.pipeline.convert.pdf import Deadline, convert_pdf
from shared.pipeline.convert.text import decode_text, sniff_text
from shared.settings import Settings, get_settings


@dataclass(frozen=True)
class Converted:
    """The converted document: Markdown text and where each page starts in it."""

    markdown: str
    # Sorted (char_offset, page_number) pairs: page `n` starts at `char_offset`. Empty: no pages.
    page_starts: list[tuple[int, int]] = field(default_factory=list)
    metadata: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def pages_for(self, char_start: int, char_end: int) -> tuple[int, int] | None:
        """First and last page covered by `markdown[char_start:char_end]`, or None."""
        if not self.page_starts:
            return None
        offsets = [offset for offset, _ in self.page_starts]
        first = max(bisect.bisect_right(offsets, char_start) - 1, 0)
        last = max(bisect.bisect_right(offsets, max(char_end - 1, char_start)) - 1, 0)
        return self.page_starts[first][1], self.page_starts[last][1]


_BINARY_MAGIC: dict[bytes, str] = {
    b"PK\x03\x04": "a ZIP-based file such as a Word (.docx) or PowerPoint document",
    b"\xd0\xcf\x11\xe0": "an old Microsoft Office document (.doc, .xls, .ppt)",
    b"{\\rtf": "an RTF document",
    b"%!PS": "a PostScript file",
    b"\x89PNG": "an image",
    b"\xff\xd8\xff": "an image",
    b"GIF8": "an image",
    b"II*\x00": "an image",
    b"MM\x00*": "an image",
    b"MZ": "a program",
    b"\x7fELF": "a program",
    b"\x1f\x8b": "a compressed archive",
}
_TEXT_TYPES = frozenset({"text/markdown", "text/x-markdown", "text/plain"})
SNIFF_BYTES = 8192


def _is_pdf(head: bytes) -> bool:
    """PDF magic at the start (after whitespace), or within the first KB after junk bytes,
    which is where PDF readers still look for it."""
    stripped = head.lstrip()
    if stripped.startswith(b"%PDF-"):
        return True
    at = head.find(b"%PDF-", 0, 1024)
    return at > 0 and sniff_text(head[:at]) != "text"


def detect_media_type(data: bytes, filename: str | None = None) -> str:
    """The media type of `data` judged by its first bytes (never by the name alone).

    `application/pdf`; `text/markdown` (or `text/plain` for a .txt name) for text, including
    text in a legacy 8-bit encoding so conversion can tell the editor to save it as UTF-8;
    otherwise `application/octet-stream`, which `convert` refuses.
    """
    head = data[:SNIFF_BYTES]
    if _is_pdf(head):
        return "application/pdf"
    if head.startswith(tuple(_BINARY_MAGIC)) and not head.startswith(codecs.BOM_UTF8):
        return "application/octet-stream"
    if sniff_text(head) is None:
        return "application/octet-stream"
    if filename and filename.lower().endswith(".txt"):
        return "text/plain"
    return "text/markdown"


def _describe_binary(data: bytes) -> str:
    for magic, kind in _BINARY_MAGIC.items():
        if data.startswith(magic):
            return f" (it looks like {kind})"
    return ""


def convert(
    data: bytes,
    media_type: str,
    filename: str | None = None,
    *,
    settings: Settings | None = None,
) -> Converted:
    """Convert `data` of `media_type` to Markdown; raises PermanentError with a typed code:
    `too_large`, `unsupported_media_type`, `undecodable_text`, `pdf_encrypted`,
    `pdf_corrupt`, `pdf_no_text`, `conversion_timeout`."""
    settings = settings or get_settings()
    if len(data) > settings.max_upload_bytes:
        raise PermanentError(
            f"This file is {_megabytes(len(data))}; the limit is "
            f"{_megabytes(settings.max_upload_bytes)}. Compress it or split it into smaller "
            "files and upload those.",
            code="too_large",
        )
    kind = media_type.split(";", 1)[0].strip().lower()
    if kind in _TEXT_TYPES:
        text, encoding = decode_text(data)
        return Converted(markdown=text, metadata={"encoding": encoding})
    if kind in ("application/pdf", "application/x-pdf"):
        deadline = Deadline(settings.convert_timeout_seconds)
        pdf = convert_pdf(data, max_pages=settings.pdf_max_pages, deadline=deadline)
        return Converted(pdf.markdown, pdf.page_starts, pdf.metadata, pdf.warnings)
    raise PermanentError(
        f"This type of file is not supported{_describe_binary(data)}. Upload a PDF, or a "
        "Markdown or plain text file.",
        code="unsupported_media_type",
    )


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"

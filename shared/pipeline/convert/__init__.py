"""Conversion: uploaded bytes (Markdown, plain text, PDF, Word, HTML) to Markdown plus a page map.

Markdown and text are decoded and otherwise kept as they are (the chunker parses them);
PDFs go through `shared.pipeline.convert.pdf`, and their pages without text through
`shared.pipeline.convert.ocr`; Word documents through `docx`, HTML pages through `html`.
Every refusal is a PermanentError with a stable code.
"""

from __future__ import annotations

import bisect
import codecs
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from shared.errors import PermanentError
from shared.pipeline.convert import ocr as ocr_engine
from shared.pipeline.convert.confidence import span_confidence
from shared.pipeline.convert.deadline import Deadline
from shared.pipeline.convert.docx import DOCX_MEDIA_TYPE, convert_docx, is_docx, is_encrypted_office
from shared.pipeline.convert.html import HTML_MEDIA_TYPE, convert_html, looks_like_html
from shared.pipeline.convert.ocr import OcrNeeded, OcrOptions
from shared.pipeline.convert.text import decode_text, sniff_text
from shared.pipeline.convert.text_bound import TextBound
from shared.settings import Settings, get_settings


@dataclass(frozen=True)
class Converted:
    """The converted document: Markdown text and where each page starts in it."""

    markdown: str
    # Sorted (char_offset, page_number) pairs: page `n` starts at `char_offset`. Empty: no pages.
    page_starts: list[tuple[int, int]] = field(default_factory=list)
    metadata: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # OCR of scanned pages (None: none): pages, languages, confidences, and `spans`, the
    # [start, end, words, mean confidence] of each OCR line in `markdown`.
    ocr: dict[str, object] | None = None

    def ocr_confidence(self, char_start: int, char_end: int) -> float | None:
        """Mean confidence (0-100) of the OCR words in `markdown[char_start:char_end]`; None
        when that text did not come from OCR."""
        spans = (self.ocr or {}).get("spans")
        return span_confidence(spans, char_start, char_end) if isinstance(spans, list) else None

    def pages_for(self, char_start: int, char_end: int) -> tuple[int, int] | None:
        """First and last page covered by `markdown[char_start:char_end]`, or None."""
        if not self.page_starts:
            return None
        offsets = [offset for offset, _ in self.page_starts]
        first = max(bisect.bisect_right(offsets, char_start) - 1, 0)
        last = max(bisect.bisect_right(offsets, max(char_end - 1, char_start)) - 1, 0)
        return self.page_starts[first][1], self.page_starts[last][1]


_BINARY_MAGIC: dict[bytes, str] = {
    b"PK\x03\x04": "a ZIP-based file such as a PowerPoint or Excel document",
    b"\xd0\xcf\x11\xe0": "an old Office document (.doc, .xls, .ppt): save it as .docx or PDF",
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

    `application/pdf`; a Word document (also when encrypted or macro-enabled: `convert` says
    why it refuses those); `text/html` for an HTML page; `text/markdown` (or `text/plain` for
    a .txt name) for text, including text in a legacy 8-bit encoding so conversion can tell the
    editor to save it as UTF-8; otherwise `application/octet-stream`, which `convert` refuses.
    """
    head = data[:SNIFF_BYTES]
    if _is_pdf(head):
        return "application/pdf"
    if is_docx(data) or is_encrypted_office(data):
        return DOCX_MEDIA_TYPE
    if head.startswith(tuple(_BINARY_MAGIC)) and not head.startswith(codecs.BOM_UTF8):
        return "application/octet-stream"
    if sniff_text(head) is None:
        return "application/octet-stream"
    if looks_like_html(head[:1024].decode("utf-8", "replace"), filename):
        return HTML_MEDIA_TYPE
    if filename and filename.lower().endswith(".txt"):
        return "text/plain"
    return "text/markdown"


def _describe_binary(data: bytes) -> str:
    for magic, kind in _BINARY_MAGIC.items():
        if data.startswith(magic):
            return f" (it looks like {kind})"
    return ""


class Ocr(StrEnum):
    """What `convert` does with PDF pages without text."""

    RUN = "run"  # read them here (the `ocr` queue, the CLI, the embedded default)
    DEFER = "defer"  # raise OcrNeeded: the worker hands the document to the `ocr` queue
    OFF = "off"


def ocr_enabled(settings: Settings) -> bool:
    """OCR_ENABLED, or, unset, whether Tesseract is installed here."""
    if settings.ocr_enabled is None:
        return ocr_engine.available()
    return settings.ocr_enabled


def _ocr_options(
    settings: Settings, mode: Ocr, language: str | None, progress: Callable[[], None] | None
) -> tuple[OcrOptions | None, str]:
    """The OCR options for `convert_pdf`, or None and the reason an editor is told."""
    if mode is Ocr.OFF:
        return None, ""
    if settings.ocr_enabled is False:
        return None, "Text recognition (OCR) is switched off on this server (OCR_ENABLED)."
    if mode is not Ocr.DEFER and not ocr_engine.available():  # the `ocr` worker checks
        return None, ocr_engine.INSTALL_HINT
    return OcrOptions(
        default_languages=settings.ocr_languages,
        document_language=language,
        dpi=settings.ocr_dpi,
        page_timeout=settings.ocr_page_timeout_seconds,
        timeout=settings.ocr_timeout_seconds,
        low_confidence=settings.ocr_low_confidence,
        defer=mode is Ocr.DEFER,
        progress=progress,
    ), ""


def convert(
    data: bytes,
    media_type: str,
    filename: str | None = None,
    *,
    settings: Settings | None = None,
    language: str | None = None,
    ocr: Ocr = Ocr.RUN,
    progress: Callable[[], None] | None = None,
) -> Converted:
    """Convert `data` of `media_type` to Markdown; raises PermanentError with a typed code:
    `too_large`, `unsupported_media_type`, `undecodable_text`, `pdf_encrypted`,
    `pdf_corrupt`, `pdf_no_text`, `conversion_timeout`, `docx_corrupt`, `office_encrypted`,
    `office_macros`, `html_no_content`.

    A PDF's pages without text are read with OCR in the document's `language` (else the
    PDF's own, else OCR_LANGUAGES) unless `ocr` says otherwise; with `Ocr.DEFER` such a PDF
    raises `OcrNeeded`. `progress` is called after each OCR page (a lease heartbeat)."""
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
        # pypdf and the layout code load with the first PDF: a Markdown-only `ingest run`
        # (and a search server) never pays for them.
        from shared.pipeline.convert.pdf import convert_pdf

        deadline = Deadline(settings.convert_timeout_seconds)
        options, reason = _ocr_options(settings, ocr, language, progress)
        pdf = convert_pdf(
            data,
            max_pages=settings.pdf_max_pages,
            deadline=deadline,
            ocr=options,
            no_ocr_reason=reason,
            text_bound=TextBound(settings.pdf_max_chars_per_page, settings.pdf_max_chars),
            drop=tuple(settings.pdf_drop_sections),
        )
        return Converted(pdf.markdown, pdf.page_starts, pdf.metadata, pdf.warnings, pdf.ocr)
    if kind == DOCX_MEDIA_TYPE:
        markdown, metadata, warnings = convert_docx(data, settings.office_max_unpacked_bytes)
        return Converted(markdown=markdown, metadata=metadata, warnings=warnings)
    if kind == HTML_MEDIA_TYPE:
        text, encoding = decode_text(data)
        markdown, metadata = convert_html(text)
        return Converted(markdown=markdown, metadata={**metadata, "encoding": encoding})
    raise PermanentError(
        f"This type of file is not supported{_describe_binary(data)}. Upload a PDF, a Word "
        "document (.docx), an HTML page, or a Markdown or plain text file.",
        code="unsupported_media_type",
    )


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


__all__ = [
    "Converted",
    "Deadline",
    "Ocr",
    "OcrNeeded",
    "convert",
    "detect_media_type",
    "ocr_enabled",
]

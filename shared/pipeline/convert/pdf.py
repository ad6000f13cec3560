"""PDF to Markdown with pypdf: open safely, read the text page by page, rebuild the structure.

Every failure becomes a PermanentError with a stable code and a message for a content editor;
nothing pypdf raises on a damaged file escapes. A cooperative deadline is checked between
pages and inside pypdf's text visitor, because signals and child processes are not available
inside Celery's prefork children (the task's hard time limit remains the backstop).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from pypdf import PasswordType, PdfReader
from pypdf.generic import Destination, DictionaryObject

from shared.errors import IngestError, PermanentError
from shared.pipeline.convert.boilerplate import drop_sections, remove_document_codes
from shared.pipeline.convert.confidence import low_confidence_warning, ocr_summary
from shared.pipeline.convert.deadline import Deadline
from shared.pipeline.convert.empty_headings import demote_empty_headings
from shared.pipeline.convert.hocr import snap_sizes
from shared.pipeline.convert.layout import (
    OutlineEntry,
    body_size,
    mark_font_headings,
    mark_outline_headings,
    mark_subheadings_under_outline,
    remove_running_lines,
)
from shared.pipeline.convert.lines import Line, extract_lines
from shared.pipeline.convert.ocr import (
    TOO_SLOW,
    OcrNeeded,
    OcrOptions,
    choose_languages,
    recognise_pages,
)
from shared.pipeline.convert.reading_order import reading_order
from shared.pipeline.convert.render import build_blocks, render
from shared.pipeline.convert.text_bound import TextBound, counting

MAX_OUTLINE_ENTRIES = 5000
_FILE_NAME_TITLE = re.compile(r"\.(docx?|odt|pdf|indd|pages|rtf|pptx?)$", re.I)
_WORD_PREFIX = re.compile(r"^microsoft (word|powerpoint) - ", re.I)

# pypdf logs every repair it makes on a damaged file; those are not the editor's business.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def corrupt(detail: str = "") -> PermanentError:
    suffix = f" ({detail})" if detail else ""
    return PermanentError(
        "This PDF is damaged or incomplete and cannot be read"
        f"{suffix}. Open it in a PDF reader, save or export it again, and upload the new copy.",
        code="pdf_corrupt",
    )


def open_pdf(data: bytes, warnings: list[str]) -> PdfReader:
    """A reader for `data`, decrypted with the empty password when that is all it takes."""
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as exc:
        raise corrupt() from exc
    if not reader.is_encrypted:
        return reader
    try:
        opened = reader.decrypt("")
    except Exception as exc:  # unsupported algorithm or a broken /Encrypt dictionary
        raise PermanentError(
            "This PDF is encrypted in a way that cannot be opened. Save an unprotected copy "
            "(without a password) and upload it again.",
            code="pdf_encrypted",
        ) from exc
    if opened == PasswordType.NOT_DECRYPTED:
        raise PermanentError(
            "This PDF is password-protected. Remove the password (or upload an unprotected "
            "copy) and upload it again.",
            code="pdf_encrypted",
        )
    warnings.append("the PDF is encrypted without a password (restrictions only); it was read")
    return reader


def page_count(reader: PdfReader, max_pages: int) -> int:
    try:
        count = len(reader.pages)
    except IngestError:
        raise
    except Exception as exc:
        raise corrupt() from exc
    if count > max_pages:
        raise PermanentError(
            f"This PDF has {count} pages; the limit is {max_pages}. Split it into smaller "
            "documents and upload those.",
            code="too_large",
        )
    return count


_PLACEHOLDERS = frozenset(
    {"untitled", "anonymous", "unspecified", "unknown", "none", "(anonymous)"}
)


def _text(value: Any) -> str | None:
    """A metadata string cleaned of spacing, or None for nothing or a generator placeholder."""
    text = " ".join(str(value).split()) if value is not None else ""
    return text if text and text.lower() not in _PLACEHOLDERS else None


def document_metadata(reader: PdfReader) -> dict[str, object]:
    """Title, author, subject and language as the PDF states them (cleaned of editor noise)."""
    metadata: dict[str, object] = {}
    try:
        info: Mapping[str, object] = reader.metadata or {}
        title = _text(info.get("/Title"))
        if title:
            title = _WORD_PREFIX.sub("", title)
            if not _FILE_NAME_TITLE.search(title):
                metadata["title"] = title
        for key, name in (("author", "/Author"), ("subject", "/Subject")):
            if value := _text(info.get(name)):
                metadata[key] = value
    except Exception:  # a broken /Info dictionary: no metadata, not a failed document
        pass
    try:
        root = reader.trailer["/Root"]  # resolved: the catalog dictionary
        if isinstance(root, DictionaryObject) and (language := _text(root.get("/Lang"))):
            metadata["language"] = language
    except Exception:
        pass
    return metadata


def read_outline(reader: PdfReader, deadline: Deadline) -> list[OutlineEntry]:
    """The bookmarks in reading order, flattened with their depth (bounded, cycle-safe)."""
    entries: list[OutlineEntry] = []
    try:
        stack: list[tuple[list[Any], int]] = [(list(reader.outline), 1)]
    except Exception:
        return []
    while stack and len(entries) < MAX_OUTLINE_ENTRIES:
        deadline.check()
        items, level = stack.pop()
        for index, item in enumerate(items):
            if isinstance(item, list):
                if level < 6:
                    stack.append((items[index + 1 :], level))
                    stack.append((item, level + 1))
                    break
                continue
            if not isinstance(item, Destination):
                continue
            try:
                page = reader.get_destination_page_number(item)
                top = item.top
                title = _text(item.title)
            except Exception:
                continue
            if page is None or page < 0 or not title:
                continue
            entries.append(
                OutlineEntry(level, title, page + 1, float(top) if top is not None else None)
            )
    return entries


def _has_images(reader: PdfReader, index: int) -> bool:
    try:
        resources = reader.pages[index].get("/Resources")
        xobjects = resources.get_object().get("/XObject") if resources else None
        if not xobjects:
            return False
        return len(xobjects.get_object()) > 0
    except Exception:
        return False


def _empty_page_warning(reader: PdfReader, index: int, ocr_ran: bool) -> str:
    if _has_images(reader, index):
        if ocr_ran:
            return f"page {index + 1} is an image in which OCR found no text; skipped"
        return f"page {index + 1} has no text (image only? it may need OCR); skipped"
    return f"page {index + 1} is empty; skipped"


MIN_LETTERS = 20  # a page with fewer letters in its text layer (and pictures) is a scan
MIN_DRAWING_BYTES = 1024  # content beyond a blank page's few operators: something is drawn


def _letters(lines: list[Line]) -> int:
    return sum(ch.isalpha() for line in lines for ch in line.text)


def _content_bytes(reader: PdfReader, index: int) -> int:
    try:
        contents = reader.pages[index].get("/Contents")
        if contents is None:
            return 0
        contents = contents.get_object()
        parts = contents if isinstance(contents, list) else [contents]
        return sum(len(part.get_object().get_data()) for part in parts)
    except Exception:
        return 0


def scanned_pages(reader: PdfReader, pages: list[list[Line]], unreadable: set[int]) -> list[int]:
    """1-based numbers of the pages to read with OCR: next to no text, and pictures (a scan,
    maybe with a stamped page number) or much drawn (text set as outlines). A blank page is
    not one: it would send a text brochure with an empty back page to the `ocr` queue."""
    return [
        index + 1
        for index, lines in enumerate(pages)
        if index + 1 not in unreadable
        and _letters(lines) < MIN_LETTERS
        and not any(line.table for line in lines)  # a form of digits drawn as a table
        and (_has_images(reader, index) or _content_bytes(reader, index) > MIN_DRAWING_BYTES)
    ]


def _read_scans(
    data: bytes, pages: list[list[Line]], numbers: list[int], ocr: OcrOptions, language: object
) -> tuple[list[int], str, list[str]]:
    """OCR `numbers` into `pages` where it reads more than the text layer; returns the pages
    it read, the languages used, and warnings."""
    if ocr.defer:
        raise OcrNeeded(numbers)
    languages = choose_languages(
        ocr.document_language or (language if isinstance(language, str) else None),
        ocr.default_languages,
    )
    found, warnings = recognise_pages(data, numbers, languages, ocr, Deadline(ocr.timeout))
    read = []
    for number, lines in found.items():
        if lines and _letters(lines) > _letters(pages[number - 1]):
            pages[number - 1] = lines
            read.append(number)
    snap_sizes(pages)
    return read, languages, warnings


def _vertical_box(reader: PdfReader, index: int) -> tuple[float, float] | None:
    """(bottom, top) of a page's media box, or None when it is missing or odd."""
    try:
        box = reader.pages[index].mediabox
        bottom, top = float(box.bottom), float(box.top)
    except Exception:
        return None
    return (bottom, top) if top > bottom else None


def read_pages(
    reader: PdfReader,
    count: int,
    deadline: Deadline,
    warnings: list[str],
    bound: TextBound | None = None,
) -> list[list[Line]]:
    """Lines of every page; a page pypdf cannot read is skipped with a warning. With a
    `bound`, text beyond it is refused (`too_large`) while pypdf reads it."""
    pages: list[list[Line]] = []
    failed = 0
    for index in range(count):
        deadline.check()
        try:
            page = reader.pages[index]
            if bound is not None:
                page = counting(page, bound, index + 1)
            lines = reading_order(extract_lines(page, index + 1, deadline.check))
        except IngestError:
            raise
        except Exception as exc:
            failed += 1
            warnings.append(f"page {index + 1} could not be read ({type(exc).__name__}); skipped")
            lines = []
        if bound is not None:
            bound.raise_refusal()
        pages.append(lines)
    if count and failed == count:
        raise corrupt("no page could be read")
    return pages


class PdfText(NamedTuple):
    """What a PDF converts to; `convert` wraps it in `Converted`."""

    markdown: str
    page_starts: list[tuple[int, int]]
    metadata: dict[str, object]
    warnings: list[str]
    ocr: dict[str, object] | None = None


def _no_text(ocr: OcrOptions | None, no_ocr_reason: str, scans: list[int]) -> PermanentError:
    if not scans:
        return PermanentError(
            "This PDF has no text, and nothing on its pages looks like a scan: they are blank. "
            "Check that this is the right file (export it again from the original program) "
            "and upload it again.",
            code="pdf_no_text",
        )
    if ocr is not None:
        return PermanentError(
            "This PDF has no text layer, and text recognition (OCR) found no text on its "
            "pages: they are blank, or pictures without words. If it does hold text, scan it "
            "again more sharply (300 dpi, straight) and upload the result.",
            code="pdf_no_text",
        )
    return PermanentError(
        "This PDF has no text layer: it looks like a scan or a set of images. "
        f"{no_ocr_reason + ' ' if no_ocr_reason else ''}Run OCR (text recognition, for "
        "example with OCRmyPDF or Adobe Acrobat) on it and upload the result.",
        code="pdf_no_text",
    )


def convert_pdf(
    data: bytes,
    *,
    max_pages: int,
    deadline: Deadline,
    ocr: OcrOptions | None = None,
    no_ocr_reason: str = "",
    text_bound: TextBound | None = None,
    drop: tuple[str, ...] = (),
) -> PdfText:
    """Markdown, page starts, metadata and warnings of a PDF (see module docstring).

    Pages without text are read with OCR when `ocr` is given (see `shared.pipeline.convert.
    ocr`); `no_ocr_reason` tells the editor why it is not, when it is not. `text_bound`
    limits the text of a page and of the whole (`too_large`, see `text_bound`). Sections
    whose headings start with one of `drop` are left out (see `boilerplate`).
    """
    warnings: list[str] = []
    reader = open_pdf(data, warnings)
    count = page_count(reader, max_pages)
    metadata = document_metadata(reader)
    metadata["page_count"] = count
    outline = read_outline(reader, deadline)
    metadata["has_outline"] = bool(outline)
    pages = read_pages(reader, count, deadline, warnings, text_bound)
    unreadable = {n for n in range(1, count + 1) if any(f"page {n} " in w for w in warnings)}
    scans = scanned_pages(reader, pages, unreadable)
    read: list[int] = []
    languages = ""
    if scans and ocr is not None:
        pdf_language = metadata.get("language")
        read, languages, ocr_warnings = _read_scans(data, pages, scans, ocr, pdf_language)
        warnings.extend(ocr_warnings)
    for index, lines in enumerate(pages):
        said = (f"page {index + 1} ", f"page {index + 1}:")
        if not lines and not any(w.startswith(said) for w in warnings):
            ocr_ran = ocr is not None and index + 1 in scans
            warnings.append(_empty_page_warning(reader, index, ocr_ran))
    if not any(pages):
        if any(TOO_SLOW in warning for warning in warnings):
            raise PermanentError(
                "Reading the scanned pages of this PDF took longer than the limit per page "
                "(OCR_PAGE_TIMEOUT_SECONDS). Scan it again at 300 dpi in black and white or "
                "grey, or split it, and upload it again.",
                code="conversion_timeout",
            )
        raise _no_text(ocr, no_ocr_reason, scans)
    warnings.extend(remove_running_lines(pages, [_vertical_box(reader, i) for i in range(count)]))
    remove_document_codes(pages, body_size(pages))
    if outline:
        warnings.extend(mark_outline_headings(pages, outline))
        mark_subheadings_under_outline(pages, body_size(pages))
    else:
        mark_font_headings(pages, body_size(pages))
    demote_empty_headings(pages, body_size(pages))
    warnings.extend(drop_sections(pages, drop))
    markdown, page_starts, spans = render(build_blocks(pages))
    if not markdown.strip():
        raise PermanentError(
            "This PDF has no readable text apart from headers and page numbers. If it is a "
            "scan, run OCR on it and upload the result.",
            code="pdf_no_text",
        )
    garbled = markdown.count("\ufffd")
    if garbled > 0.02 * len(markdown):
        warnings.append(
            f"{garbled} characters could not be decoded (a font without a character map); "
            "the text may be garbled"
        )
    if "title" not in metadata:
        first_h1 = next((ln for ln in markdown.splitlines() if ln.startswith("# ")), None)
        if first_h1:
            metadata["title"] = first_h1[2:].strip()
    summary = None
    if read and ocr is not None:
        summary, low = ocr_summary(pages, read, spans, languages, ocr)
        if low:
            warnings.append(low_confidence_warning(low))
    return PdfText(markdown, page_starts, metadata, warnings, summary)

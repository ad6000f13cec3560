"""Text recognition for PDF pages without a text layer: render with pdfium, read with Tesseract.

A page is rendered in grey at `dpi` (300 suits Tesseract, whose models expect letters some
20-30 pixels high), read as hOCR, and turned into the same `Line`s a text layer gives: left
edge and baseline in PDF points, and as size Tesseract's estimate of the row's text size
(`x_size`). Layout then finds headings, running lines, lists and paragraphs by the same rules
as for a text layer. Two things a scan needs first: sizes are snapped to a few classes
(`snap_sizes`: OCR measures one 10-point body as 9.6 on one line and 10.1 on the next, and
layout compares sizes), and a bullet Tesseract reads as a letter ("e" for "•") is recognised by
its shape (a small raised blob set apart from the words).
"""

from __future__ import annotations

import functools
import math
import os
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass

from shared.pipeline.convert.deadline import Deadline
from shared.pipeline.convert.lines import Line
from shared.pipeline.convert.text import BULLET_GLYPHS, clean_pdf_line

INSTALL_HINT = (
    "Text recognition (OCR) is not installed on this server: operators install Tesseract with "
    "its Dutch and English data (Debian/Ubuntu: apt-get install tesseract-ocr "
    "tesseract-ocr-nld tesseract-ocr-eng; the service's Docker image has it)."
)
_XHTML = "{http://www.w3.org/1999/xhtml}"
_LINE_CLASSES = frozenset({"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"})
# ISO 639-1 (the documents' `language`, PDF /Lang) to Tesseract's language data names.
_TESSERACT_CODES = {
    "nl": "nld", "en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita",
    "pt": "por", "pl": "pol", "tr": "tur", "ar": "ara", "da": "dan", "sv": "swe",
}  # fmt: skip
_BULLET_MISREADS = frozenset("«»*°©®¢•·") | BULLET_GLYPHS
TOO_SLOW = "text recognition took longer than the limit"
MAX_PIXELS = 40_000_000  # an A3 page at 400 dpi; an A4 at 300 dpi is 8.7 million
ASCENDER = 0.72  # baseline to ascender top, as a share of the font size (Helvetica, Arial)
SIZE_CLASS = 1.10  # sorted OCR sizes less than 10 % apart belong to one class
BODY_CLASS = 1.12  # ... and within 12 % of the body size are body text


@functools.cache
def installed_languages() -> frozenset[str]:
    """Tesseract's installed language data; empty when Tesseract is not installed."""
    try:
        import pytesseract

        return frozenset(pytesseract.get_languages(config="")) - {"osd"}
    except Exception:  # not installed, not executable, or broken: no OCR here
        return frozenset()


def available() -> bool:
    return bool(installed_languages())


def choose_languages(document_language: str | None, default: str) -> str:
    """Tesseract languages for a document: its own language when that data is installed,
    else `default` ("nld+eng"), else whatever is installed."""
    installed = installed_languages()
    if document_language:
        primary = document_language.replace("_", "-").split("-", 1)[0].lower()
        code = _TESSERACT_CODES.get(primary, primary)
        if code in installed:
            return code
    wanted = [part for part in default.split("+") if part in installed]
    return "+".join(wanted or sorted(installed))


@dataclass(frozen=True)
class OcrOptions:
    """How to read scanned pages; `defer`: do not read them here, raise `OcrNeeded` (the
    worker hands the document to the `ocr` queue)."""

    default_languages: str = "nld+eng"
    document_language: str | None = None
    dpi: int = 300
    page_timeout: float = 60.0
    timeout: float = 1800.0
    low_confidence: float = 75.0  # a page whose words' mean confidence is lower gets a warning
    defer: bool = False
    progress: Callable[[], None] | None = None  # called after each page (a lease heartbeat)


class OcrNeeded(Exception):
    """The PDF has pages without text that OCR can read, and this worker does not run it."""

    def __init__(self, pages: list[int]) -> None:
        super().__init__(f"pages {pages} need OCR")
        self.pages = pages


def recognise_pages(
    data: bytes, numbers: list[int], languages: str, options: OcrOptions, deadline: Deadline
) -> tuple[dict[int, list[Line]], list[str]]:
    """OCR lines of the pages `numbers` (1-based), and warnings for pages that failed."""
    import pypdfium2 as pdfium
    import pytesseract

    # One Tesseract thread: workers run one OCR per core already, and on a busy machine its
    # OpenMP threads wait on each other (bench/ocr.py: 2.5-6.5x slower with two). Overridable.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    warnings: list[str] = []
    found: dict[int, list[Line]] = {}
    try:
        document = pdfium.PdfDocument(data)
    except Exception as exc:  # pypdf read it, pdfium cannot: no scan to read
        return {}, [f"the pages could not be rendered for OCR ({type(exc).__name__})"]
    try:
        for number in numbers:
            deadline.check()
            try:
                page = document[number - 1]
                dpi = render_dpi(page, options.dpi, page.get_size())
                image = page.render(scale=dpi / 72, grayscale=True).to_pil()
                page.close()
                hocr = pytesseract.image_to_pdf_or_hocr(
                    image,
                    lang=languages,
                    extension="hocr",
                    timeout=max(min(options.page_timeout, deadline.remaining()), 0.01),
                )
            except pytesseract.TesseractError as exc:  # a RuntimeError too: before the next
                warnings.append(f"page {number} could not be read by OCR ({exc.message})")
                continue
            except RuntimeError:  # pytesseract's timeout
                deadline.check()
                warnings.append(
                    f"page {number}: {TOO_SLOW} ({options.page_timeout:g} seconds); skipped"
                )
                continue
            except Exception as exc:
                warnings.append(f"page {number} could not be read by OCR ({type(exc).__name__})")
                continue
            found[number] = parse_hocr(hocr, number, 72 / dpi, image.height)
            if options.progress:
                options.progress()
    finally:
        document.close()
    return found, warnings


def render_dpi(page: object, most: int, size: tuple[float, float]) -> int:
    """The resolution to read a page at: `most`, or the resolution of the scan that covers
    the page when that is lower (at least 100). Upsampling a 150 dpi scan to 300 adds no
    detail but blurs the letters: Tesseract misread four times as many characters that way.
    A poster-sized page is read at a lower resolution, within MAX_PIXELS."""
    width, height = size
    if width > 0 and height > 0:
        most = max(int(min(most, 72 * math.sqrt(MAX_PIXELS / (width * height)))), 1)
    return min(most, _scan_dpi(page, most))


def _scan_dpi(page: object, most: int) -> int:
    import pypdfium2.raw as pdfium_c

    try:
        scans = [
            (image.get_px_size()[0], image.get_bounds())
            for image in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=2)  # type: ignore[attr-defined]
        ]
    except Exception:
        return most
    if not scans:
        return most
    width_px, (left, _, right, _) = max(scans, key=lambda s: (s[1][2] - s[1][0]) * s[0])
    if right - left <= 0:
        return most
    native = width_px / ((right - left) / 72)
    return int(min(most, max(native, 100)))


def _title(element: ET.Element) -> dict[str, list[str]]:
    """hOCR's `title` properties: "bbox 1 2 3 4; x_wconf 96" -> {"bbox": [...], ...}."""
    properties: dict[str, list[str]] = {}
    for part in (element.get("title") or "").split(";"):
        name, *values = part.split()
        if name:
            properties[name] = values
    return properties


def _number(properties: dict[str, list[str]], name: str, index: int = 0) -> float:
    try:
        return float(properties[name][index])
    except (KeyError, IndexError, ValueError):
        return 0.0


@dataclass
class _Word:
    text: str
    box: tuple[float, float, float, float]  # left, top, right, bottom in pixels
    confidence: float


def parse_hocr(hocr: bytes, number: int, scale: float, height_px: int) -> list[Line]:
    """Lines of one page from Tesseract's hOCR; `scale` turns pixels into points."""
    try:
        root = ET.fromstring(hocr)
    except ET.ParseError:
        return []
    lines: list[Line] = []
    for element in root.iter(f"{_XHTML}span"):
        if element.get("class") not in _LINE_CLASSES:
            continue
        words = [
            _Word(
                "".join(span.itertext()).strip().strip("_"),  # "_" at an edge: a speck
                tuple(_number(_title(span), "bbox", i) for i in range(4)),  # type: ignore[misc]
                _number(_title(span), "x_wconf"),
            )
            for span in element.iter(f"{_XHTML}span")
            if span.get("class") == "ocrx_word"
        ]
        words = [word for word in words if word.text]
        if not words:
            continue
        line = _line(words, _title(element), number, scale, height_px)
        if line is not None:
            lines.append(line)
    return lines


def _line(
    words: list[_Word], properties: dict[str, list[str]], number: int, scale: float, height: int
) -> Line | None:
    bottom = _number(properties, "bbox", 3)
    baseline = bottom + _number(properties, "baseline", 1)  # the offset is negative (upwards)
    x_size = _number(properties, "x_size") or (bottom - _number(properties, "bbox", 1))
    descenders = _number(properties, "x_descenders")
    x_height = x_size - _number(properties, "x_ascenders") - descenders
    text_x = None
    bullet = False
    first = words[0].text
    if len(first) > 1 and first[0] in _BULLET_MISREADS and first[1].isalpha():
        words[0].text = first[1:]  # "«neem": the bullet read as part of the first word
        bullet = True
    elif len(words) > 1 and _is_bullet(words[0], words[1], x_height):
        words = words[1:]
        text_x = words[0].box[0] * scale
        bullet = True
    words = [word for word in words if _is_text(word)]
    if not words:
        return None
    text = clean_pdf_line(("• " if bullet else "") + " ".join(word.text for word in words))
    if not text:
        return None
    return Line(
        text,
        number,
        words[0].box[0] * scale,
        (height - baseline) * scale,
        # Baseline to ascender top, as a font size: Tesseract's row size counts descenders
        # only where a line has some ("Herstel thuis" measured 10 % smaller than its peers).
        round((x_size - descenders) * scale / ASCENDER, 2),
        False,  # Tesseract's LSTM models report no font weight
        text_x=text_x,
        confidence=statistics.fmean(word.confidence for word in words),
        words=len(words),
    )


def _is_text(word: _Word) -> bool:
    """False for specks read as marks: no letter or digit, and little confidence, or a lone
    stroke ("|": a scanned table's rule or a page edge, never a word)."""
    if not word.text.strip("|"):
        return False
    return any(ch.isalnum() for ch in word.text) or word.confidence >= 80 or (
        word.text in BULLET_GLYPHS
    )


def _is_bullet(first: _Word, second: _Word, x_height: float) -> bool:
    """A bullet glyph, whatever Tesseract read it as ("e", "o", "*"): a lone mark clearly
    smaller than a letter, set apart from the words that follow."""
    if first.text in BULLET_GLYPHS:
        return True
    if len(first.text) > 1 or first.text.isdigit() or x_height <= 0:
        return False
    left, top, right, bottom = first.box
    small = bottom - top <= 0.8 * x_height and right - left <= 1.2 * x_height
    apart = second.box[0] - right >= 0.6 * x_height
    return small and apart


def snap_sizes(pages: list[list[Line]]) -> None:
    """Give the OCR lines' sizes a few exact values, as fonts have.

    With a text layer elsewhere in the PDF, OCR sizes are scaled so the body sizes agree and
    snapped to the text layer's sizes (and weights) where one is close. Otherwise OCR sizes
    within 12 % of the most common one are body text (and a line that reads as part of a
    sentence within 35 %); the rest fall into classes of sizes less than 10 % apart.
    """
    ocr = [line for lines in pages for line in lines if line.confidence is not None]
    text = [line for lines in pages for line in lines if line.confidence is None]
    if not ocr:
        return
    ocr_body = _most_common_size(ocr)
    targets: list[float] = []
    bold: dict[float, bool] = {}
    if text:
        text_body = _most_common_size(text)
        for line in ocr:
            line.size *= text_body / ocr_body
        ocr_body = text_body
        targets = sorted({line.size for line in text})
        bold = {size: _mostly_bold(text, size) for size in targets}
    for line in ocr:
        ratio = line.size / ocr_body
        if abs(ratio - 1) <= BODY_CLASS - 1 or (_sentence_like(line.text) and ratio < 1.35):
            line.size = ocr_body
    rest = sorted((line for line in ocr if line.size != ocr_body), key=lambda ln: ln.size)
    classes: list[list[Line]] = []
    for line in rest:
        if classes and line.size <= classes[-1][-1].size * SIZE_CLASS:
            classes[-1].append(line)
        else:
            classes.append([line])
    for members in classes:
        size = round(statistics.median(line.size for line in members) * 2) / 2
        near = [t for t in targets if abs(t / size - 1) <= SIZE_CLASS - 1]
        size = min(near, key=lambda t: abs(t - size)) if near else size
        for line in members:
            line.size = size
            line.bold = bold.get(size, False)  # OCR sees no weight: take the text layer's


def _mostly_bold(lines: list[Line], size: float) -> bool:
    at_size = [line.bold for line in lines if line.size == size]
    return sum(at_size) * 2 > len(at_size)


def _sentence_like(text: str) -> bool:
    """Text that reads as a piece of a sentence, not a heading: it starts in lower case or
    ends like a clause. OCR mismeasures such a line now and then; it stays body text."""
    return text[:1].islower() or text.endswith((".", ",", ";")) or len(text.split()) > 16


def _most_common_size(lines: list[Line]) -> float:
    """The size (to half points) that most characters are set in."""
    weights: dict[float, int] = {}
    for line in lines:
        size = round(line.size * 2) / 2
        weights[size] = weights.get(size, 0) + len(line.text)
    return max(weights, key=lambda s: (weights[s], -s))


def ocr_summary(
    pages: list[list[Line]],
    read: list[int],
    spans: list[tuple[int, int, int, float]],
    languages: str,
    options: OcrOptions,
) -> tuple[dict[str, object], list[int]]:
    """What the editor and the chunks need to know of the OCR: the pages read, the mean word
    confidence (all and per page), pages below `options.low_confidence`, and the character
    spans of the OCR text in the Markdown with their confidences (for each chunk's own)."""
    words: dict[int, int] = {}
    total: dict[int, float] = {}
    for lines in pages:
        for line in lines:
            if line.confidence is not None and line.words:
                words[line.page] = words.get(line.page, 0) + line.words
                total[line.page] = total.get(line.page, 0.0) + line.confidence * line.words
    per_page = {page: round(total[page] / words[page], 1) for page in sorted(words)}
    overall = sum(total.values()) / sum(words.values()) if words else 0.0
    low = [page for page, confidence in per_page.items() if confidence < options.low_confidence]
    summary = {
        "pages": sorted(read),
        "languages": languages,
        "dpi": options.dpi,
        "confidence": round(overall, 1),
        "page_confidence": {str(page): value for page, value in per_page.items()},
        "low_confidence_pages": low,
        "spans": [[start, end, count, round(conf, 1)] for start, end, count, conf in spans],
    }
    return summary, low


def page_ranges(pages: list[int]) -> str:
    """[3, 4, 7] -> "3-4, 7"."""
    ranges: list[list[int]] = []
    for page in sorted(pages):
        if ranges and page == ranges[-1][1] + 1:
            ranges[-1][1] = page
        else:
            ranges.append([page, page])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in ranges)


def low_confidence_warning(pages: list[int]) -> str:
    word = "page" if len(pages) == 1 else "pages"
    return (
        f"scanned; text recognised with low confidence on {word} {page_ranges(pages)}: "
        "check the chunks"
    )


def span_confidence(
    spans: list[list[float]] | list[tuple[int, int, int, float]], start: int, end: int
) -> float | None:
    """The mean confidence of the OCR words in `markdown[start:end]`, or None (no OCR text)."""
    words = 0
    total = 0.0
    for span_start, span_end, count, confidence in spans:
        if span_start < end and span_end > start:
            words += int(count)
            total += float(confidence) * int(count)
    return round(total / words, 1) if words else None

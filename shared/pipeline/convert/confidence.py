"""How sure the OCR was: per page and per chunk, and the warning an editor sees."""

from __future__ import annotations

from shared.pipeline.convert.lines import Line
from shared.pipeline.convert.ocr import OcrOptions


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

"""Markdown documents of one shape at a given size (in characters), for the chunker's
linearity test and `bench/chunk_shapes.py`: the shapes that are easy to make
superlinear and the ordinary ones beside them."""

from __future__ import annotations

from collections.abc import Callable

_SENTENCE = "De patiënt neemt de tabletten in met een glas water, bij voorkeur tijdens het eten. "
_CJK = "患者应在饭后用一杯水服用药片如果出现副作用请立即联系医生"


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    body = size - len(head) - len(tail)
    return head + (unit * (body // len(unit) + 1))[: max(body, 0)] + tail


def prose(size: int) -> str:
    """Ordinary prose: headings and paragraphs of a few sentences."""
    unit = "## Inname\n\n" + _SENTENCE * 6 + "\n\n" + _SENTENCE * 4 + "\n\n"
    return _repeat(unit, size, head="# Medicijnen\n\n")


def paragraph(size: int) -> str:
    """One huge paragraph of sentences: no blank line anywhere."""
    return _repeat(_SENTENCE, size, head="# Een alinea\n\n")


def table(size: int) -> str:
    """One big GFM table."""
    head = "# Tabel\n\n| Middel | Dosis | Opmerking |\n|---|---|---|\n"
    return _repeat("| paracetamol | 500 mg | niet meer dan 6 per dag |\n", size, head=head)


def long_word(size: int) -> str:
    """One "word" without a space: base64 or a URL pasted whole."""
    return _repeat("aZ3+kQ9/xT0=", size, head="# Bijlage\n\n")


def cjk(size: int) -> str:
    """Chinese text without spaces and without sentence ends."""
    return _repeat(_CJK, size, head="# 说明\n\n")


def nesting(size: int) -> str:
    """Lists and quotes nested as deep as the lines allow, over and over."""
    unit = "".join("  " * depth + "- niveau\n" for depth in range(40))
    unit += "".join("> " * depth + "citaat\n" for depth in range(1, 40)) + "\n"
    return _repeat(unit, size, head="# Genest\n\n")


def code(size: int) -> str:
    """One long fenced code block."""
    return _repeat("print('dosis', 500)  # mg\n", size, head="# Code\n\n```python\n", tail="```\n")


def huge_list(size: int) -> str:
    """One list of many short items."""
    return _repeat("- neem 1 tablet per dag\n", size, head="# Lijst\n\n")


SHAPES: dict[str, Callable[[int], str]] = {
    "prose": prose,
    "paragraph": paragraph,
    "table": table,
    "long_word": long_word,
    "cjk": cjk,
    "nesting": nesting,
    "code": code,
    "list": huge_list,
}

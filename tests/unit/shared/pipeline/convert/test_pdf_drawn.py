"""Bullets and tables that a PDF draws as shapes (tests/support/pdfs_drawn.py) become Markdown
lists and GFM tables."""

from __future__ import annotations

import re

from shared.pipeline.chunk import chunk_markdown
from shared.pipeline.convert import Ocr, convert
from tests.support import pdfs_drawn

PDF = "application/pdf"
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def _markdown(data: bytes) -> str:
    return convert(data, PDF, ocr=Ocr.DEFER).markdown


def _gfm(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def test_drawn_dots_become_list_items_nested_by_indent() -> None:
    markdown = _markdown(pdfs_drawn.dot_list_pdf())
    expected = "\n".join("  " * depth + "- " + text for text, depth in pdfs_drawn.DOT_ITEMS)
    assert expected in markdown
    # The paragraphs around are no items. (The list is drawn last, as Chrome does; where it
    # goes is the reading order's business, not tested here.)
    assert "- " + pdfs_drawn.INTRO not in markdown
    assert "- " + pdfs_drawn.OUTRO not in markdown


def test_drawn_squares_become_list_items() -> None:
    markdown = _markdown(pdfs_drawn.square_list_pdf())
    assert "\n".join("- " + text for text in pdfs_drawn.SQUARE_ITEMS) in markdown
    assert "- " + pdfs_drawn.OUTRO not in markdown


def test_browser_ruled_table_becomes_a_gfm_table_without_false_headings() -> None:
    markdown = _markdown(pdfs_drawn.ruled_table_pdf("browser"))
    assert _gfm(pdfs_drawn.TABLE_HEADER, pdfs_drawn.TABLE_ROWS) in markdown
    assert HEADING.findall(markdown) == ["Doseringsschema"]  # bold header cells: no headings
    assert markdown.index(pdfs_drawn.INTRO) < markdown.index("| Dag")
    assert markdown.index("| 6 |") < markdown.index(pdfs_drawn.OUTRO)


def test_table_of_stroked_lines_becomes_a_gfm_table() -> None:
    markdown = _markdown(pdfs_drawn.ruled_table_pdf("lines"))
    assert _gfm(pdfs_drawn.TABLE_HEADER, pdfs_drawn.TABLE_ROWS) in markdown


def test_list_and_table_on_one_page_keep_apart() -> None:
    markdown = _markdown(pdfs_drawn.list_and_table_pdf())
    assert "\n".join("- " + text for text in pdfs_drawn.SQUARE_ITEMS) in markdown
    assert _gfm(pdfs_drawn.RISK_HEADER, pdfs_drawn.RISK_ROWS) in markdown
    assert "- Hoofdpijn" not in markdown  # the rows are no list items


def test_table_going_on_over_a_page_break_is_one_table_and_no_scan() -> None:
    converted = convert(pdfs_drawn.table_over_two_pages_pdf(), PDF, ocr=Ocr.DEFER)
    rows = [[*row, ""] for row in pdfs_drawn.DIGIT_ROWS]
    assert _gfm(["Dag", "Tijdstip", "Saturatie"], rows) in converted.markdown
    assert [page for _, page in converted.page_starts] == [1, 2]


def test_the_chunker_keeps_a_table_whole() -> None:
    markdown = _markdown(pdfs_drawn.ruled_table_pdf("browser"))
    table = _gfm(pdfs_drawn.TABLE_HEADER, pdfs_drawn.TABLE_ROWS)
    assert any(table in chunk.text for chunk in chunk_markdown(markdown))


def test_boxes_of_paragraphs_are_no_table() -> None:
    markdown = _markdown(pdfs_drawn.layout_boxes_pdf())
    assert "|" not in markdown
    assert pdfs_drawn.LAYOUT_TEXT in markdown

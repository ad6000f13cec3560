"""Reading order of PDF pages whose content stream is not in the order a reader sees."""

from __future__ import annotations

import re

from shared.pipeline.convert import convert
from shared.pipeline.convert.lines import Line
from shared.pipeline.convert.reading_order import reading_order
from tests.support import layout_pdfs as fixtures

PDF = "application/pdf"


def _flat(markdown: str) -> str:
    return " ".join(re.sub(r"^(#+|-)\s", "", markdown, flags=re.M).split())


def test_a_list_drawn_after_the_paragraph_below_it_is_read_in_its_place() -> None:
    text = _flat(convert(fixtures.list_drawn_last_pdf(), PDF).markdown)
    places = [
        text.index(part)
        for part in [
            fixtures.LIST_PAGE_TITLE,
            fixtures.LIST_INTRO,
            *fixtures.LIST_ITEMS,
            fixtures.LIST_AFTER[:40],
        ]
    ]
    assert places == sorted(places), text


def test_two_columns_are_read_one_after_the_other() -> None:
    markdown = convert(fixtures.two_column_pdf(), PDF).markdown
    text = _flat(markdown)
    assert fixtures.COLUMN_TITLE in text
    assert " ".join(fixtures.LEFT_COLUMN.split()) in text, text
    assert " ".join(fixtures.RIGHT_COLUMN.split()) in text, text
    assert text.index(fixtures.LEFT_COLUMN[:30]) < text.index(fixtures.RIGHT_COLUMN[:30])


def test_table_cells_drawn_column_by_column_are_read_row_by_row() -> None:
    text = _flat(convert(fixtures.table_pdf(), PDF).markdown)
    rows = [" ".join(row) for row in fixtures.TABLE_ROWS]
    assert " ".join(rows) in text, text


def test_a_line_of_narrow_letters_stays_in_its_column() -> None:
    """Its estimated end lies in the gutter: it must not cut the columns into sections."""
    text = _flat(convert(fixtures.narrow_gutter_pdf(), PDF).markdown)
    left = " ".join(fixtures.NARROW_GUTTER_LEFT)
    right = " ".join(fixtures.NARROW_GUTTER_RIGHT)
    assert f"{left} {right}" in text, text


def _line(text: str, x: float, y: float) -> Line:
    return Line(text, 1, x, y, 10.0, False)


def test_lines_on_one_baseline_keep_content_order_when_their_positions_tie() -> None:
    first, second = _line("a", 50, 700), _line("b", 50, 700)
    below = _line("c", 50, 680)
    assert [line.text for line in reading_order([below, first, second])] == ["a", "b", "c"]


def test_a_centred_page_number_does_not_make_a_column() -> None:
    body = [
        _line("een lange regel tekst over de hele breedte van de pagina", 50, y)
        for y in range(700, 500, -14)
    ]
    numbers = [_line("1", 290, 60), _line("folder 12", 290, 45)]
    ordered = reading_order(numbers + body)
    assert ordered == body + numbers

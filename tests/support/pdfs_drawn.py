"""PDFs whose bullets and tables are drawn, not typed: how browsers print web pages.

A browser prints a `<ul>`'s bullets as small filled dots (nested: small squares) and a
table's borders as thin filled rectangles over white cell backgrounds; a word processor
strokes its table lines. These helpers draw both with reportlab, so the tests know where
every bullet, row and cell is. The lists are drawn after the rest of the page, as Chrome does.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

PAGE_WIDTH, PAGE_HEIGHT = A4
LEFT = 72.0
BODY, BOLD, SIZE = "Helvetica", "Helvetica-Bold", 10.0
LEADING = 15.0

DOT_ITEMS = [
    ("Neem uw medicijnen mee in de originele verpakking.", 0),
    ("Stop met bloedverdunners zoals:", 0),
    ("acenocoumarol", 1),
    ("fenprocoumon", 1),
    ("Eet vanaf middernacht niets meer.", 0),
]
SQUARE_ITEMS = ["identiteitsbewijs", "verzekeringspas", "medicijnpaspoort"]
TABLE_HEADER = ["Dag", "Dosis", "Wanneer"]
TABLE_ROWS = [
    ["1", "2 tabletten", "'s ochtends bij het ontbijt"],
    ["2 tot en met 5", "1 tablet", "'s avonds"],
    ["6", "geen", "controle op de poli"],
]
RISK_HEADER = ["Bijwerking", "Hoe vaak"]
RISK_ROWS = [["Hoofdpijn", "Kans 1 op de 10 tot 100"], ["Huiduitslag", "Kans 1 op de 1000"]]


@dataclass
class _Page:
    canvas: Canvas
    y: float = PAGE_HEIGHT - 90

    def heading(self, text: str) -> None:
        self.y -= 10
        self.canvas.setFont(BOLD, 14)
        self.canvas.drawString(LEFT, self.y, text)
        self.y -= 22

    def text(self, text: str) -> None:
        self.canvas.setFont(BODY, SIZE)
        self.canvas.drawString(LEFT, self.y, text)
        self.y -= LEADING * 1.6


def _dot(canvas: Canvas, x: float, baseline: float) -> None:
    canvas.circle(x + 3, baseline + 3.5, 3, stroke=0, fill=1)  # a 6 pt dot, as Chrome


def _square(canvas: Canvas, x: float, baseline: float) -> None:
    canvas.rect(x, baseline + 1, 5, 5, stroke=0, fill=1)


def _list(page: _Page, items: list[tuple[str, int]], square: bool = False) -> list[tuple]:
    """Positions of the items, to draw them after the rest of the page."""
    placed = []
    for text, depth in items:
        placed.append((text, depth, page.y))
        page.y -= LEADING
    page.y -= LEADING * 0.6
    return [(text, depth, y, square) for text, depth, y in placed]


def _draw_list(canvas: Canvas, placed: list[tuple]) -> None:
    for text, depth, y, square in placed:
        x = LEFT + 8 + 24 * depth
        (_square if square or depth else _dot)(canvas, x, y)
        canvas.setFont(BODY, SIZE)
        canvas.drawString(x + 16, y, text)


def _table(
    page: _Page, header: list[str], rows: list[list[str]], widths: list[float], ruled: str
) -> None:
    """A table as a browser draws it (`ruled="browser"`: white cells, 0.75 pt filled
    rectangles as borders, the header bold) or a word processor (`"lines"`: stroked lines)."""
    canvas = page.canvas
    height = 24.0
    xs = [LEFT]
    for width in widths:
        xs.append(xs[-1] + width)
    top = page.y + 14
    all_rows = [header, *rows]
    bottom = top - height * len(all_rows)
    if ruled == "browser":
        canvas.setFillColorRGB(1, 1, 1)
        for r in range(len(all_rows)):
            for c in range(len(widths)):
                canvas.rect(xs[c], top - height * (r + 1), widths[c], height, stroke=0, fill=1)
        canvas.setFillColorRGB(0, 0, 0)
        for r in range(len(all_rows) + 1):
            canvas.rect(xs[0], top - height * r - 0.75, xs[-1] - xs[0], 0.75, stroke=0, fill=1)
        for x in xs:
            canvas.rect(x, bottom, 0.75, top - bottom, stroke=0, fill=1)
    else:
        canvas.setLineWidth(0.5)
        for r in range(len(all_rows) + 1):
            canvas.line(xs[0], top - height * r, xs[-1], top - height * r)
        for x in xs:
            canvas.line(x, bottom, x, top)
    for r, row in enumerate(all_rows):
        canvas.setFont(BOLD if r == 0 else BODY, SIZE)
        for c, cell in enumerate(row):
            canvas.drawString(xs[c] + 6, top - height * r - 16, cell)
    page.y = bottom - 30


def _pdf(draw: object) -> bytes:
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    draw(canvas)  # type: ignore[operator]
    canvas.save()
    return buffer.getvalue()


INTRO = "Lees deze folder goed door voordat u naar het ziekenhuis komt."
OUTRO = "Heeft u nog vragen, bel dan de polikliniek."


def dot_list_pdf() -> bytes:
    """A list with drawn round dots, two items with a nested list of square bullets."""

    def draw(canvas: Canvas) -> None:
        page = _Page(canvas)
        page.heading("Voorbereiding")
        page.text(INTRO)
        placed = _list(page, DOT_ITEMS)
        page.text(OUTRO)
        _draw_list(canvas, placed)
        canvas.showPage()

    return _pdf(draw)


def square_list_pdf() -> bytes:
    """A list whose bullets are small filled squares."""

    def draw(canvas: Canvas) -> None:
        page = _Page(canvas)
        page.heading("Meenemen")
        page.text(INTRO)
        placed = _list(page, [(text, 0) for text in SQUARE_ITEMS], square=True)
        page.text(OUTRO)
        _draw_list(canvas, placed)
        canvas.showPage()

    return _pdf(draw)


def ruled_table_pdf(ruled: str = "browser") -> bytes:
    """A dose schedule as a ruled table with a bold header row."""

    def draw(canvas: Canvas) -> None:
        page = _Page(canvas)
        page.heading("Doseringsschema")
        page.text(INTRO)
        _table(page, TABLE_HEADER, TABLE_ROWS, [90, 110, 180], ruled)
        page.text(OUTRO)
        canvas.showPage()

    return _pdf(draw)


def list_and_table_pdf() -> bytes:
    """One page with a dot list and a risk table drawn with stroked lines."""

    def draw(canvas: Canvas) -> None:
        page = _Page(canvas)
        page.heading("Bijwerkingen")
        page.text(INTRO)
        placed = _list(page, [(text, 0) for text in SQUARE_ITEMS])
        _table(page, RISK_HEADER, RISK_ROWS, [150, 200], "lines")
        page.text(OUTRO)
        _draw_list(canvas, placed)
        canvas.showPage()

    return _pdf(draw)


DIGIT_ROWS = [[f"{day}.", time] for day in range(1, 9) for time in ("09.00", "14.00")]


def table_over_two_pages_pdf() -> bytes:
    """A form of measuring times whose table goes on on page 2, where it is all the page
    holds: digits, no words (the page must not be taken for a scan)."""

    def draw(canvas: Canvas) -> None:
        page = _Page(canvas)
        page.heading("Metingen")
        page.text(INTRO)
        page.y = 200
        _table(page, ["Dag", "Tijdstip", "Saturatie"], DIGIT_ROWS[:4], [80, 80, 160], "browser")
        canvas.showPage()
        page = _Page(canvas)
        _table(page, DIGIT_ROWS[4], DIGIT_ROWS[5:], [80, 80, 160], "browser")
        canvas.showPage()

    return _pdf(draw)


LAYOUT_TEXT = " ".join([INTRO] * 8)  # a paragraph, not a cell's value


def layout_boxes_pdf() -> bytes:
    """Two rows of two ruled boxes side by side holding paragraphs: a page layout."""

    def draw(canvas: Canvas) -> None:
        page = _Page(canvas)
        page.heading("Twee kolommen")
        cells = [LAYOUT_TEXT, LAYOUT_TEXT]
        _table(page, ["Links", "Rechts"], [cells], [220, 220], "lines")
        canvas.showPage()

    return _pdf(draw)

"""Fixture PDFs whose drawing order differs from their reading order, built with reportlab.

A browser print ("Print to PDF") draws a page's bulleted list after the rest of the page, so
pypdf reads the list last; layout programs draw columns, side boxes and footers in whatever
order they like. These pages are drawn out of order on purpose; the tests know the order a
reader sees.
"""

from __future__ import annotations

import io

from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import simpleSplit
from reportlab.pdfgen.canvas import Canvas

PAGE_WIDTH, PAGE_HEIGHT = A4
MARGIN = 56.0
FONT, BOLD, SIZE = "Helvetica", "Helvetica-Bold", 10.0
LEADING = SIZE * 1.4

LIST_PAGE_TITLE = "Na de behandeling"
LIST_INTRO = "Na de behandeling mag u het volgende niet doen:"
LIST_ITEMS = [
    "zwaar tillen in de eerste week",
    "zelf autorijden op de dag van de behandeling",
    "zwemmen of in bad gaan tot de wond dicht is",
]
LIST_AFTER = (
    "Heeft u koorts of neemt de pijn toe? Bel dan de polikliniek. Buiten kantoortijden belt "
    "u de Spoedeisende Hulp van het ziekenhuis."
)

COLUMN_TITLE = "Uw opname"
LEFT_COLUMN = (
    "Op de dag van de opname meldt u zich bij de centrale balie in de hal. Een medewerker "
    "brengt u naar de afdeling, waar de verpleegkundige u ontvangt en uitlegt hoe de dag "
    "verloopt. Neem uw medicijnen mee in de originele verpakking."
)
RIGHT_COLUMN = (
    "Bezoek is welkom tussen twee en acht uur. Op de kamer is plaats voor twee bezoekers "
    "tegelijk. Kinderen onder de twaalf jaar komen alleen onder begeleiding van een "
    "volwassene."
)


def _wrap(text: str, width: float) -> list[str]:
    return simpleSplit(text, FONT, SIZE, width)


def list_drawn_last_pdf() -> bytes:
    """One page: title, intro, a bulleted list, a paragraph under it. The content stream
    draws the list after the paragraph that follows it on the page, as Chrome does."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    width = PAGE_WIDTH - 2 * MARGIN
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(BOLD, 18)
    canvas.drawString(MARGIN, y, LIST_PAGE_TITLE)
    y -= 18 * 1.6
    canvas.setFont(FONT, SIZE)
    canvas.drawString(MARGIN, y, LIST_INTRO)
    y -= LEADING
    list_top = y
    y -= LEADING * len(LIST_ITEMS) + LEADING * 0.5
    for line in _wrap(LIST_AFTER, width):  # the paragraph below the list, drawn first
        canvas.drawString(MARGIN, y, line)
        y -= LEADING
    y = list_top
    for item in LIST_ITEMS:  # then the list, higher up the page
        canvas.drawString(MARGIN + 18, y, item)
        y -= LEADING
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def two_column_pdf() -> bytes:
    """One page: a title over two columns; the columns' lines share baselines and are drawn
    row by row (left line, right line), as a naive position sort would read them."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    gutter = 24.0
    column = (PAGE_WIDTH - 2 * MARGIN - gutter) / 2
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(BOLD, 18)
    canvas.drawString(MARGIN, y, COLUMN_TITLE)
    y -= 18 * 1.6
    canvas.setFont(FONT, SIZE)
    left, right = _wrap(LEFT_COLUMN, column), _wrap(RIGHT_COLUMN, column)
    for row in range(max(len(left), len(right))):
        if row < len(left):
            canvas.drawString(MARGIN, y, left[row])
        if row < len(right):
            canvas.drawString(MARGIN + column + gutter, y, right[row])
        y -= LEADING
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


TABLE_ROWS = [
    ("Medicijn", "Ochtend", "Avond"),
    ("Paracetamol", "1 tablet", "1 tablet"),
    ("Omeprazol", "1 capsule", "geen"),
    ("Metformine", "2 tabletten", "1 tablet"),
]


def table_pdf() -> bytes:
    """A short intro over a three-column table of short cells, drawn column by column."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(FONT, SIZE)
    canvas.drawString(MARGIN, y, "Zo neemt u uw medicijnen in de week na de operatie in:")
    top = y - LEADING * 1.5
    for number in range(3):
        y = top
        for row in TABLE_ROWS:
            canvas.drawString(MARGIN + number * 150, y, row[number])
            y -= LEADING
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


SHORT_LEADING, SHORT_GAP = 15.0, 20.2  # a browser print: 10 pt text, 1.5 line height


Row = tuple[str, float, str, float]  # font, size, text, gap before it (in leadings)


def draw_rows(canvas: Canvas, rows: list[Row], leading: float = SHORT_LEADING) -> float:
    """Each row at the left margin, `gap` leadings below the one before; the last baseline."""
    y = PAGE_HEIGHT - MARGIN - 20
    for font, size, text, gap in rows:
        y -= leading * gap
        canvas.setFont(font, size)
        canvas.drawString(MARGIN, y, text)
    return y


def rows_pdf(rows: list[Row], leading: float = SHORT_LEADING) -> bytes:
    """A one-page PDF of `rows` (see `draw_rows`)."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    draw_rows(canvas, rows, leading)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


SHORT_ITEMS = [
    "Blijf rustig.",
    "Laat de aanval zijn beloop hebben.",
    "Leg iets zachts onder het hoofd.",
    "Probeer de aanval niet tegen te houden.",
    "Blijf bij de persoon tot de aanval over is.",
    "Noteer hoe lang de aanval duurt.",
]
SHORT_INTRO = (
    "Een aanval ziet er voor omstanders vaak heftig uit. Meestal is ingrijpen niet nodig en "
    "gaat de aanval binnen een paar minuten vanzelf over."
)


def short_paragraphs_pdf() -> bytes:
    """A page of mostly one-line paragraphs (list items without a bullet, as a browser
    prints them) 1.35 line heights apart: more paragraph gaps than line gaps."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(FONT, 10)
    for line in simpleSplit(SHORT_INTRO, FONT, 10, 300):
        canvas.drawString(MARGIN, y, line)
        y -= SHORT_LEADING
    y -= SHORT_GAP - SHORT_LEADING
    for item in SHORT_ITEMS:
        canvas.drawString(MARGIN, y, item)
        y -= SHORT_GAP
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


TALL_LINE_BEFORE = "Er zijn kenmerken die het risico op het krijgen van een tweede beroerte"
TALL_LINE_AFTER = "vergroten. Op sommige van die risicofactoren heeft u geen invloed."


def sentence_over_a_wide_gap_pdf() -> bytes:
    """A paragraph of which one line sits 1.5 line heights below the one before (a browser
    sets a line taller when it holds a link or an inline picture), mid-sentence."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(FONT, 10)
    for text, gap in [
        ("Even belangrijk als medicijnen is het terugdringen van risicofactoren.", 1.0),
        ("Dat zijn gewoonten en", 1.0),
        (TALL_LINE_BEFORE, 1.0),
        (TALL_LINE_AFTER, 1.5),
        ("Andere risicofactoren kunt u wel beïnvloeden door gezond te leven.", 1.0),
    ]:
        y -= SHORT_LEADING * gap
        canvas.drawString(MARGIN, y, text)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


HYPHEN_LINES = [
    "Na het onderzoek bespreken de MDL-",
    "artsen de uitslag met u. Soms is een CT-",
    "scanner nodig; die staat naast de zieken-",
    "huisapotheek op de begane grond.",
]


def hyphenated_pdf() -> bytes:
    """One paragraph whose lines end in hyphens: two real (after an abbreviation), one a
    word broken at the line end."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(FONT, 10)
    for text in HYPHEN_LINES:
        canvas.drawString(MARGIN, y, text)
        y -= SHORT_LEADING
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


BOLD_SUBHEADING = "Bijwerkingen of complicaties"
BOLD_IN_PARAGRAPH = "Neem altijd uw medicijnlijst mee"
BOLD_RUNNING_ON = "Let goed op wanneer u na de behandeling"


def bold_lines_pdf() -> bytes:
    """18 pt title; 10 pt text; a bold 11 pt sub-heading set apart; a bold line inside a
    paragraph's rhythm; a bold line whose sentence goes on in lower case below it."""
    rows = [
        (BOLD, 18, "Behandeling met bestraling", 0.0),
        (FONT, 10, "Deze folder vertelt u wat u van de bestraling kunt verwachten.", 2.0),
        (FONT, 10, "Lees hem rustig door en neem hem mee naar uw afspraak.", 1.0),
        (BOLD, 11, BOLD_SUBHEADING, 2.0),
        (FONT, 10, "De meeste mensen hebben weinig last van de behandeling. Soms", 1.4),
        (FONT, 10, "wordt de huid rood. Dat trekt na een paar weken weer weg.", 1.0),
        (BOLD, 10, BOLD_IN_PARAGRAPH, 1.0),
        (FONT, 10, "Op die lijst staan alle medicijnen die u nu gebruikt.", 1.0),
        (FONT, 10, "De verpleegkundige bespreekt de lijst met u.", 1.0),
        (BOLD, 10, BOLD_RUNNING_ON, 2.0),
        (FONT, 10, "koorts krijgt, en bel dan de afdeling.", 1.0),
    ]
    return rows_pdf(rows)


FOLDER_CODE = "114501072025"
END_BLOCKS = [
    ("Wat vindt u van deze patiënteninformatie?", "Wij horen graag uw mening over deze folder."),
    ("Spreekt u geen of slecht Nederlands?", "De informatie in deze folder is belangrijk."),
    ("Do you speak Dutch poorly or not at all?", "This brochure contains information for you."),
]

# The end blocks as OCR reads a scan of them: accents lost, a letter misread ("hiç": "hig").
OCR_READ_END_BLOCKS = [
    (
        "Czy Panstwa znajomosc jezyka niderlandzkiego jest slaba?",
        "Prosimy o kontakt z nami, zanim przyjdzie Pan lub Pani do szpitala na wizyte.",
    ),
    (
        "Hollandaca dilini hig konusamiyor musunuz?",
        "Bu brosur sizin icin onemlidir; randevunuzdan once bizi arayin ve sorun.",
    ),
]


def folder_with_end_blocks_pdf(blocks: list[tuple[str, str]] = END_BLOCKS) -> bytes:
    """A title, a real section, then the standard end blocks as 12 pt bold headings with
    text, and the folder's order code in 7.5 pt small print at the bottom."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    rows = [(BOLD, 18, "Nierbiopsie", 0.0), (BOLD, 12, "Vragen", 2.0)]
    rows.append((FONT, 10, "Heeft u nog vragen? Bel dan de polikliniek.", 1.5))
    for heading, text in blocks:
        rows += [(BOLD, 12, heading, 2.0), (FONT, 10, text, 1.5)]
    y = draw_rows(canvas, rows)
    canvas.setFont(FONT, 7.5)
    canvas.drawRightString(PAGE_WIDTH - MARGIN, y - 60, FOLDER_CODE)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def bold_body_pdf() -> bytes:
    """A title over one-line paragraphs all set in bold at the body size, spaced apart."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(BOLD, 18)
    canvas.drawString(MARGIN, y, "Afspraak maken")
    canvas.setFont(BOLD, 10)
    for text in SHORT_ITEMS:
        y -= SHORT_GAP * 1.3
        canvas.drawString(MARGIN, y, text.rstrip("."))
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


NARROW_GUTTER_LEFT = [
    "Was uw handen voor u begint.",
    "Leg alles klaar op een schone tafel.",
    "Til niet, fiets niet, til ook geen tas of fles,",
    "tot uw wond dicht is en de arts het zegt.",
    "Bel bij koorts de polikliniek.",
]
NARROW_GUTTER_RIGHT = [
    "Neem de folder mee naar uw afspraak.",
    "Vraag de apotheek om een nieuwe pen.",
    "Bewaar de pennen in de koelkast.",
    "Gooi een lege pen weg in de container.",
    "Schrijf de datum op de verpakking.",
]


def narrow_gutter_pdf() -> bytes:
    """Two columns 20 pt apart, drawn one after the other (as a browser does); one left line
    of narrow letters ("Til niet, fiets niet") fits its column, but its length (0.45 of the
    size per character) says it reaches into the gutter."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    column, gutter = 200.0, 20.0
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(BOLD, 18)
    canvas.drawString(MARGIN, y, COLUMN_TITLE)
    y -= 18 * 1.6
    canvas.setFont(FONT, SIZE)
    for x, column_lines in [
        (MARGIN, NARROW_GUTTER_LEFT),
        (MARGIN + column + gutter, NARROW_GUTTER_RIGHT),
    ]:
        for row, text in enumerate(column_lines):
            canvas.drawString(x, y - row * LEADING, text)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


WRAPPED_TITLE = ("Leefregels bij het ABCD-", "syndroom")


def wrapped_title_pdf() -> bytes:
    """A title set over two lines, broken after a real hyphen ("ABCD-" / "syndroom"),
    over a paragraph."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(BOLD, 18)
    for line in WRAPPED_TITLE:
        canvas.drawString(MARGIN, y, line)
        y -= 18 * 1.2
    y -= 18 * 0.6
    canvas.setFont(FONT, SIZE)
    for line in _wrap(LEFT_COLUMN, PAGE_WIDTH - 2 * MARGIN):
        canvas.drawString(MARGIN, y, line)
        y -= LEADING
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


HEADING_SENTENCE = "Is de pijn na een uur nog even erg, dan belt u de afdeling."
BOLD_LAST_LINE = "Locatie Noord: telefoonnummer (012) 345 6789"


def empty_headings_pdf() -> bytes:
    """Two sections at 14 pt bold; the first ends with a sentence set in that heading style,
    right above the second; a box of text before them ends with a bold line at body size
    (no full stop) right above a heading."""
    rows = [
        (BOLD, 18, "Pijn na de ingreep", 0.0),
        (FONT, 10, "Bel de afdeling als u vragen heeft over de ingreep of de nazorg.", 2.0),
        (FONT, 10, "Locatie Zuid: telefoonnummer (012) 345 6700.", 2.0),
        (BOLD, 10, BOLD_LAST_LINE, 2.0),
        (BOLD, 14, "Wat doet u bij pijn?", 2.5),
        (FONT, 10, "Neem een tablet paracetamol en ga rustig liggen. Wacht een uur.", 1.6),
        (BOLD, 14, HEADING_SENTENCE, 2.0),
        (BOLD, 14, "Hoe lang duurt de pijn?", 2.0),
        (FONT, 10, "Meestal is de pijn na twee of drie dagen weg. Soms duurt het langer.", 1.6),
        (FONT, 10, "Gebruik de tabletten niet langer dan een week zonder overleg.", 1.0),
    ]
    return rows_pdf(rows)


# A running footer as OCR reads it beside a logo: other noise on each page.
OCR_READ_FOOTERS = ["4. Kliniek Zuidwest", "rf Kliniek Zuidwest 2", "Ge Kliniek Zuidwest 3"]
OCR_READ_PAGES = [("Opname", LEFT_COLUMN), ("Bezoek", RIGHT_COLUMN), ("Thuis", LIST_AFTER)]


def ocr_read_footers_pdf() -> bytes:
    """Three pages of text, each with the footer of OCR_READ_FOOTERS at its bottom."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    pages = zip(OCR_READ_PAGES, OCR_READ_FOOTERS, strict=True)
    for (title, text), footer in pages:
        y = PAGE_HEIGHT - MARGIN - 20
        canvas.setFont(BOLD, 14)
        canvas.drawString(MARGIN, y, title)
        canvas.setFont(FONT, SIZE)
        for line in _wrap(text, PAGE_WIDTH - 2 * MARGIN):
            y -= LEADING
            canvas.drawString(MARGIN, y, line)
        canvas.drawString(MARGIN, MARGIN, footer)
        canvas.showPage()
    canvas.save()
    return buffer.getvalue()


SCAN_SECTIONS = [
    (
        "Wat kunt u zelf doen?",
        [
            (
                "Handen wassen",
                "Was uw handen met water en zeep na elk toiletbezoek en voor het eten.",
            ),
            ("Bezoek", "Uw bezoek meldt zich eerst bij de verpleging van de afdeling."),
        ],
    ),
    (
        "Na de opname",
        [
            ("Thuis", "Thuis wast u uw handen vaak, zeker na het toiletbezoek."),
            ("Werk", "Overleg met uw werkgever wanneer u weer kunt beginnen."),
        ],
    ),
]


HEADING_FONT = "Times-Bold"


def section_levels_pdf() -> bytes:
    """A title (18 pt), sections (14 pt) and sub-sections (12 pt) in a bold serif over
    10 pt sans text: three heading levels a scan of it must keep apart. The serif's
    shorter ascenders make OCR measure its headings smaller, against the body, than
    they are."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    width = PAGE_WIDTH - 2 * MARGIN
    y = PAGE_HEIGHT - MARGIN - 20
    canvas.setFont(BOLD, 18)
    canvas.drawString(MARGIN, y, "Besmetting voorkomen")
    y -= 18 * 1.8
    canvas.setFont(FONT, SIZE)
    for line in _wrap(LEFT_COLUMN + " " + RIGHT_COLUMN, width):
        canvas.drawString(MARGIN, y, line)
        y -= LEADING
    for section, subsections in SCAN_SECTIONS:
        y -= 14
        canvas.setFont(HEADING_FONT, 14)
        canvas.drawString(MARGIN, y, section)
        y -= 14 * 1.6
        for title, text in subsections:
            canvas.setFont(HEADING_FONT, 12)
            canvas.drawString(MARGIN, y, title)
            y -= 12 * 1.6
            canvas.setFont(FONT, SIZE)
            for line in _wrap(text + " " + LIST_AFTER, width):
                canvas.drawString(MARGIN, y, line)
                y -= LEADING
            y -= 8
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()

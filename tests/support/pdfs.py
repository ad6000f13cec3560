"""PDFs built with reportlab for the tests: a brochure like the ones the hospital publishes.

A module of helpers (not a conftest) so that conversion, pipeline and API tests can share them.
The brochure is drawn line by line on a canvas so the tests know exactly where every heading,
bullet, running header, page number and hyphenated line break is.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import simpleSplit
from reportlab.pdfgen.canvas import Canvas

PAGE_WIDTH, PAGE_HEIGHT = A4
MARGIN = 72.0
TEXT_WIDTH = PAGE_WIDTH - 2 * MARGIN
BODY_FONT, BODY_BOLD, BODY_SIZE = "Helvetica", "Helvetica-Bold", 11.0
HEADING_SIZES = {1: 22.0, 2: 15.0, 3: BODY_SIZE}  # H3: body size, bold only
RUNNING_HEADER = "Sint-Elisabeth Ziekenhuis - Patiënteninformatie"
RUNNING_FOOTER = "Afdeling Orthopedie - versie maart 2025"

BROCHURE_TITLE = "Knieoperatie"
# (level, heading, page) in order of appearance: what conversion must recover.
BROCHURE_SECTIONS: list[tuple[int, str, int]] = [
    (1, BROCHURE_TITLE, 1),
    (2, "Voorbereiding", 1),
    (3, "Wat neemt u mee?", 1),
    (3, "Medicijnen", 2),
    (2, "De dag van de operatie", 2),
    (3, "Na de operatie", 3),
    (2, "Contact", 5),
]
# Heading paths the chunker should report for text under each section.
BROCHURE_HEADING_PATHS: list[list[str]] = [
    ["Knieoperatie"],
    ["Knieoperatie", "Voorbereiding"],
    ["Knieoperatie", "Voorbereiding", "Wat neemt u mee?"],
    ["Knieoperatie", "Voorbereiding", "Medicijnen"],
    ["Knieoperatie", "De dag van de operatie"],
    ["Knieoperatie", "De dag van de operatie", "Na de operatie"],
    ["Knieoperatie", "Contact"],
]
BROCHURE_BULLETS = [
    "uw identiteitskaart of paspoort",
    "een lijst van de medicijnen die u gebruikt",
    "makkelijke kleding en stevige schoenen met een gesloten hiel",
    "krukken, als u die al heeft",
]
# The word that the brochure splits over two lines with a hyphen ("zieken-" / "huis").
HYPHENATED_WORD = "ziekenhuisapotheek"
BLANK_PAGE = 4

_INTRO = (
    "In deze folder leest u hoe u zich voorbereidt op een knieoperatie, wat er op de dag van "
    "de operatie gebeurt en waar u na de operatie op moet letten. Lees de folder rustig door "
    "en neem hem mee naar het ziekenhuis. Heeft u na het lezen nog vragen, dan kunt u die "
    "altijd stellen aan uw behandelend arts of aan de verpleegkundige van de afdeling."
)
_PREP = (
    "Een goede voorbereiding helpt u sneller te herstellen. Ongeveer twee weken voor de "
    "operatie heeft u een gesprek met de anesthesioloog. Die bespreekt met u hoe u wordt "
    "verdoofd en welke medicijnen u voor de operatie mag blijven gebruiken. Stop niet op "
    "eigen houtje met medicijnen, maar overleg altijd eerst met uw arts."
)
_MEDS = (
    "Gebruikt u bloedverdunners, dan hoort u van de anesthesioloog wanneer u daarmee stopt. "
    "De medicijnen die u na de operatie nodig heeft, haalt u op bij de zieken-\n"
    "huisapotheek op de begane grond. Neem uw medicijnpaspoort mee, zodat de apotheker kan "
    "nagaan of de nieuwe medicijnen goed samengaan met wat u al gebruikt. Pijnstillers krijgt "
    "u in de eerste dagen op vaste tijden, ook als u nog geen pijn heeft."
)
_DAY = (
    "Op de dag van de operatie meldt u zich op het afgesproken tijdstip bij de balie van de "
    "dagbehandeling. U bent vanaf middernacht nuchter: u eet niet meer en drinkt alleen nog "
    "water tot twee uur voor de opname. Een verpleegkundige brengt u naar de voorbereidings"
    "kamer, waar u een infuus krijgt. De operatie zelf duurt ongeveer anderhalf uur. "
    "Daarna gaat u naar de uitslaapkamer, waar we uw bloeddruk, hartslag en pijn goed in de "
    "gaten houden. Als alles goed gaat, brengen we u na een paar uur terug naar de afdeling. "
    "Uw familie kan u daar vanaf het einde van de middag bezoeken."
)
_AFTER = (
    "Na de operatie oefent u samen met de fysiotherapeut. U leert lopen met krukken en "
    "traplopen, zodat u zich thuis goed kunt redden. De meeste patiënten gaan na twee of drie "
    "dagen naar huis. Thuis zet u de oefeningen voort die u in het ziekenhuis heeft geleerd."
)
_AFTER_BULLETS = [
    "Koel de knie een paar keer per dag tien minuten met een coldpack in een handdoek.",
    "Leg het been hoog als u zit, zodat de zwelling sneller afneemt. Dit geldt vooral in de "
    "eerste twee weken na de operatie, wanneer de knie nog dik en warm kan aanvoelen.",
    "Neem de pijnstillers zoals afgesproken.",
]
_CONTACT = (
    "Heeft u koorts boven de 38,5 graden, een rode, warme of lekkende wond, of neemt de pijn "
    "toe in plaats van af? Bel dan direct de polikliniek Orthopedie via 010 123 45 67. Buiten "
    "kantoortijden belt u de Spoedeisende Hulp via 010 123 45 00."
)


@dataclass
class _Writer:
    """Draws flowing text on A4 pages and the running header and footer on each page."""

    canvas: Canvas
    running: bool = True
    page: int = 1
    y: float = PAGE_HEIGHT - MARGIN - 20
    blank_pages: set[int] = field(default_factory=set)

    def finish_page(self) -> None:
        if self.running and self.page not in self.blank_pages:
            self.canvas.setFont(BODY_FONT, 8)
            self.canvas.drawString(MARGIN, PAGE_HEIGHT - 40, RUNNING_HEADER)
            self.canvas.drawString(MARGIN, 40, RUNNING_FOOTER)
            self.canvas.drawRightString(PAGE_WIDTH - MARGIN, 40, f"Pagina {self.page}")
        self.canvas.showPage()
        self.page += 1
        self.y = PAGE_HEIGHT - MARGIN - 20

    def blank_page(self) -> None:
        self.finish_page()
        self.blank_pages.add(self.page)
        self.finish_page()

    def _room(self, height: float) -> None:
        if self.y - height < MARGIN + 20:
            self.finish_page()

    def heading(self, text: str, level: int) -> None:
        size = HEADING_SIZES[level]
        self._room(size * 3)
        self.y -= size * 0.8
        self.canvas.setFont(BODY_BOLD, size)
        self.canvas.drawString(MARGIN, self.y, text)
        self.y -= size * 1.0

    def paragraph(self, text: str, indent: float = 0.0, bullet: str | None = None) -> None:
        """Wraps `text` to the column; a newline in `text` forces a line break there, a form
        feed a page break (as when a paragraph runs on to the next page)."""
        leading = BODY_SIZE * 1.3
        lines = [
            line
            for piece in text.split("\n")
            for line in (
                ["\f"]
                if piece == "\f"
                else simpleSplit(piece, BODY_FONT, BODY_SIZE, TEXT_WIDTH - indent)
            )
        ]
        for number, line in enumerate(lines):
            if line == "\f":
                self.finish_page()
                continue
            self._room(leading)
            self.canvas.setFont(BODY_FONT, BODY_SIZE)
            if bullet and number == 0:
                self.canvas.drawString(MARGIN + indent - 12, self.y, bullet)
            self.canvas.drawString(MARGIN + indent, self.y, line)
            self.y -= leading
        self.y -= leading * 0.6

    def bullets(self, items: list[str], glyph: str = "\u2022") -> None:
        for item in items:
            self.paragraph(item, indent=18, bullet=glyph)
            self.y += BODY_SIZE * 1.3 * 0.6  # list items sit closer together than paragraphs


def _canvas(buffer: io.BytesIO, title: str | None = None) -> Canvas:
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    if title:
        canvas.setTitle(title)
        canvas.setAuthor("Afdeling Orthopedie")
    return canvas


def brochure_pdf() -> bytes:
    """Five pages: title, H2/H3 headings, bullets, running header/footer, a blank page 4."""
    buffer = io.BytesIO()
    writer = _Writer(_canvas(buffer, title="Knieoperatie - patiëntenfolder"))
    writer.heading(BROCHURE_TITLE, 1)
    writer.paragraph(_INTRO)
    writer.heading("Voorbereiding", 2)
    writer.paragraph(_PREP)
    writer.heading("Wat neemt u mee?", 3)
    writer.bullets(BROCHURE_BULLETS)
    writer.paragraph(_PREP.replace("Een goede", "Nog een keer: een goede"))
    writer.finish_page()
    writer.heading("Medicijnen", 3)
    writer.paragraph(_MEDS)
    writer.heading("De dag van de operatie", 2)
    writer.paragraph(_DAY)
    # This paragraph runs on from page 2 to page 3 in the middle of a sentence.
    writer.paragraph(
        _DAY.replace("Op de dag", "Ook op de dag").replace(
            "waar we uw bloeddruk, hartslag", "waar we uw bloeddruk,\n\f\nhartslag"
        )
    )
    writer.heading("Na de operatie", 3)
    writer.paragraph(_AFTER)
    writer.bullets(_AFTER_BULLETS, glyph="\u25aa")
    writer.blank_page()
    writer.heading("Contact", 2)
    writer.paragraph(_CONTACT)
    writer.finish_page()
    writer.canvas.save()
    return buffer.getvalue()


OUTLINE_SECTIONS: list[tuple[int, str, int]] = [
    (1, "Heup vervangen", 1),
    (2, "Waarom een nieuwe heup?", 1),
    (2, "De operatie", 2),
    (3, "Verdoving", 2),
    (2, "Revalidatie", 3),
]
_OUTLINE_TEXT = {
    "Heup vervangen": "Deze folder gaat over het vervangen van uw heup door een prothese.",
    "Waarom een nieuwe heup?": (
        "Bij ernstige artrose doet uw heup pijn, ook als u stilzit. Een nieuwe heup neemt "
        "die pijn meestal weg en u kunt weer beter lopen."
    ),
    "De operatie": "De operatie duurt ongeveer een uur. U ligt op uw zij.",
    "Verdoving": "Meestal krijgt u een ruggenprik; soms bent u helemaal onder narcose.",
    "Revalidatie": "Al op de dag van de operatie staat u met de fysiotherapeut naast het bed.",
}


def outlined_pdf() -> bytes:
    """Three pages whose headings are all body-size and plain: only the outline tells them."""
    buffer = io.BytesIO()
    canvas = _canvas(buffer, title="Heup vervangen")
    writer = _Writer(canvas, running=False)
    parents: dict[int, str] = {}
    current_page = 1
    for level, title, page in OUTLINE_SECTIONS:
        while current_page < page:
            writer.finish_page()
            current_page += 1
        key = f"s{len(parents)}-{title}"
        canvas.bookmarkHorizontal(key, MARGIN, writer.y + 5)
        canvas.addOutlineEntry(title, key, level=level - 1)
        parents[level] = key
        writer.paragraph(title)  # drawn like body text: no font cue
        writer.paragraph(_OUTLINE_TEXT[title])
    writer.finish_page()
    canvas.save()
    return buffer.getvalue()


# (level, heading, bookmarked): chapters and sections in the outline, sub-sections only in bold.
PARTLY_OUTLINED_SECTIONS: list[tuple[int, str, bool]] = [
    (1, "Heup vervangen", True),
    (2, "De operatie", True),
    (3, "Verdoving", False),
    (3, "Wondzorg", False),
    (2, "Revalidatie", True),
]


def partly_outlined_pdf() -> bytes:
    """Headings in the brochure's fonts, but bookmarks only for H1 and H2 (as a word processor
    makes them when its table of contents stops at level 2)."""
    buffer = io.BytesIO()
    canvas = _canvas(buffer, title="Heup vervangen")
    writer = _Writer(canvas, running=False)
    for number, (level, title, bookmarked) in enumerate(PARTLY_OUTLINED_SECTIONS):
        writer.heading(title, level)
        if bookmarked:
            key = f"s{number}"
            canvas.bookmarkHorizontal(key, MARGIN, writer.y + HEADING_SIZES[level] * 2)
            canvas.addOutlineEntry(title, key, level=level - 1)
        writer.paragraph(_INTRO)
    writer.finish_page()
    canvas.save()
    return buffer.getvalue()


def _simple_pdf() -> bytes:
    buffer = io.BytesIO()
    writer = _Writer(_canvas(buffer, title="Beveiligd"), running=False)
    writer.heading("Beveiligde folder", 1)
    writer.paragraph(_INTRO)
    writer.finish_page()
    writer.canvas.save()
    return buffer.getvalue()


def _encrypt(data: bytes, user_password: str, owner_password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password, owner_password, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted_pdf(user_password: str = "secret") -> bytes:
    """A PDF that needs `user_password` to be opened."""
    return _encrypt(_simple_pdf(), user_password, "owner-secret")


def empty_password_pdf() -> bytes:
    """Encrypted with an empty user password (only permissions restricted): opens as is."""
    return _encrypt(_simple_pdf(), "", "owner-secret")


def image_only_pdf(pages: int = 2) -> bytes:
    """A 'scanned' PDF: every page is an image, no text layer at all."""
    from reportlab.lib.utils import ImageReader

    png = _tiny_png()
    buffer = io.BytesIO()
    canvas = _canvas(buffer)
    for _ in range(pages):
        canvas.drawImage(ImageReader(io.BytesIO(png)), MARGIN, MARGIN, 300, 400)
        canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def with_image_page_pdf() -> bytes:
    """Text on page 1, an image-only page 2, text on page 3."""
    from reportlab.lib.utils import ImageReader

    buffer = io.BytesIO()
    writer = _Writer(_canvas(buffer), running=False)
    writer.heading("Scan en tekst", 1)
    writer.paragraph(_INTRO)
    writer.finish_page()
    writer.canvas.drawImage(ImageReader(io.BytesIO(_tiny_png())), MARGIN, MARGIN, 300, 400)
    writer.finish_page()
    writer.paragraph(_AFTER)
    writer.finish_page()
    writer.canvas.save()
    return buffer.getvalue()


def _tiny_png() -> bytes:
    """A 4x4 grey PNG, written by hand with zlib so no imaging library is needed."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    raw = b"".join(b"\x00" + b"\x80" * 4 for _ in range(4))
    header = struct.pack(">IIBBBBB", 4, 4, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


FLOWING_SECTIONS: list[tuple[int, str]] = [
    (1, "Staaroperatie"),
    (2, "Voorbereiding"),
    (3, "Meenemen"),
    (2, "Na afloop"),
]


def flowing_brochure_pdf() -> bytes:
    """The same kind of brochure laid out by reportlab's platypus (styles, wrapped and
    justified paragraphs, a list flowable, running header and "n / N" page numbers), which
    writes its content streams differently from the line-by-line canvas brochure."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import ListFlowable, ListItem, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    styles["BodyText"].alignment = 4  # justified

    def on_page(canvas: Canvas, doc: SimpleDocTemplate) -> None:
        canvas.setFont(BODY_FONT, 8)
        canvas.drawString(MARGIN, PAGE_HEIGHT - 32, "Ziekenhuis Noord - patiëntenfolder")
        canvas.drawCentredString(PAGE_WIDTH / 2, 30, f"{doc.page} / 3")

    body = styles["BodyText"]
    story = [
        Paragraph("Staaroperatie", styles["Title"]),
        Paragraph(" ".join([_INTRO] * 3), body),
        Paragraph("Voorbereiding", styles["Heading2"]),
        Paragraph(" ".join([_PREP] * 4), body),
        Paragraph("Meenemen", styles["Heading3"]),
        ListFlowable(
            [ListItem(Paragraph(text, body)) for text in BROCHURE_BULLETS], bulletType="bullet"
        ),
        Paragraph(" ".join([_DAY] * 5), body),
        Paragraph("Na afloop", styles["Heading2"]),
        Paragraph(" ".join([_AFTER] * 4), body),
    ]
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=A4, title="Staaroperatie", invariant=True)
    doc.build(story, onFirstPage=on_page, onLaterPages=on_page)
    return buffer.getvalue()


def text_bomb_pdf(uses: int = 5000, lines: int = 10, pages: int = 1) -> bytes:
    """A small PDF whose text layer is huge: one form XObject of `lines` lines of
    1,410 characters in a 1-point font, drawn `uses` times on each page. pypdf reads the
    form's text at every use (it stops after 5,000 uses a page), so each page yields about
    `uses * lines * 1410` characters from a file of a few KB."""
    buffer = io.BytesIO()
    canvas = _canvas(buffer, title="Tekstbom")
    canvas.beginForm("herhaald")
    canvas.setFont(BODY_FONT, 1)
    for number in range(lines):
        canvas.drawString(MARGIN, MARGIN + number, (_INTRO[:140] + " ") * 10)
    canvas.endForm()
    for _ in range(pages):
        for _ in range(uses):
            canvas.doForm("herhaald")
        canvas.showPage()
    canvas.save()
    return buffer.getvalue()

"""Build `heupoperatie-brochure.pdf`, the example PDF brochure, with reportlab.

The brochure is written like the hospital's own: a title, H2 and H3 headings in larger and
bold fonts, bullet lists, and a running header and footer with page numbers on every page.
Run `uv run python examples/make_brochure.py` to build it again.
"""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import cm
from reportlab.platypus import (
    ListFlowable,
    ListItem,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
)

OUT = Path(__file__).with_name("heupoperatie-brochure.pdf")

SECTIONS: list[tuple[str, list[str], list[str]]] = [
    (
        "Waarom een nieuwe heup?",
        [
            "Bij ernstige artrose doet uw heup pijn, ook als u stilzit of slaapt. Lopen, "
            "traplopen en sokken aantrekken worden steeds moeilijker. Een nieuwe heup, een "
            "totale heupprothese, neemt die pijn meestal weg, zodat u weer beter kunt lopen.",
            "Samen met de orthopedisch chirurg besluit u of een operatie verstandig is. "
            "Daarbij wegen uw klachten, uw leeftijd en uw gezondheid mee.",
        ],
        [],
    ),
    (
        "Voor de operatie",
        [
            "Enkele weken voor de operatie komt u op het preoperatieve spreekuur. U spreekt "
            "daar de anesthesioloog, die met u de verdoving bespreekt, en de verpleegkundige, "
            "die uitlegt hoe de opname verloopt.",
        ],
        [
            "neem uw medicijnoverzicht van de apotheek mee",
            "regel hulp in huis voor de eerste zes weken",
            "leen een verhoogde toiletbril en een douchestoel",
        ],
    ),
    (
        "De operatie",
        [
            "De operatie duurt ongeveer een uur. Meestal krijgt u een ruggenprik; soms bent u "
            "helemaal onder narcose. De chirurg vervangt de heupkop en de heupkom door een "
            "prothese van metaal en kunststof.",
            "Na de operatie blijft u korte tijd op de uitslaapkamer. Daarna gaat u terug naar "
            "de verpleegafdeling, waar u dezelfde dag met de fysiotherapeut naast het bed staat.",
        ],
        [],
    ),
    (
        "Herstel thuis",
        [
            "De eerste zes weken loopt u met krukken. Doe de oefeningen van de fysiotherapeut "
            "elke dag, ook als het wat pijn doet: dat helpt uw spieren sterker te worden.",
            "Bel de polikliniek als de wond rood, warm of dik wordt, als er vocht uit blijft "
            "komen, of als u koorts krijgt boven 38,5 graden.",
        ],
        [
            "niet op de geopereerde zij slapen in de eerste zes weken",
            "niet diep bukken en de benen niet over elkaar slaan",
            "autorijden pas na overleg met de chirurg",
        ],
    ),
]


def running_header_and_footer(canvas, document) -> None:  # type: ignore[no-untyped-def]
    canvas.saveState()
    canvas.setFont("Helvetica", 8)
    canvas.drawString(2 * cm, A4[1] - 1.2 * cm, "Voorbeeldziekenhuis - Orthopedie")
    canvas.drawRightString(A4[0] - 2 * cm, 1.2 * cm, f"Pagina {document.page}")
    canvas.restoreState()


def build() -> None:
    styles = getSampleStyleSheet()
    body = ParagraphStyle("body", parent=styles["BodyText"], fontSize=10.5, leading=14)
    h1 = ParagraphStyle("h1", parent=styles["Title"], fontSize=22, leading=26)
    h2 = ParagraphStyle("h2", parent=styles["Heading2"], fontName="Helvetica-Bold", fontSize=15)
    story = [Paragraph("Heupoperatie", h1), Spacer(1, 0.4 * cm)]
    story.append(
        Paragraph(
            "Deze folder is voor patiënten die binnenkort een nieuwe heup krijgen. Lees hem "
            "samen met uw naasten en neem hem mee naar het spreekuur.",
            body,
        )
    )
    for heading, paragraphs, bullets in SECTIONS:
        if heading == "De operatie":
            story.append(PageBreak())
        story.append(Paragraph(heading, h2))
        story.extend(Paragraph(text, body) for text in paragraphs)
        if bullets:
            items = [ListItem(Paragraph(item, body)) for item in bullets]
            story.append(ListFlowable(items, bulletType="bullet", start="\u2022"))
    document = SimpleDocTemplate(
        str(OUT),
        pagesize=A4,
        title="Heupoperatie",
        author="Voorbeeldziekenhuis",
        topMargin=2.2 * cm,
        bottomMargin=2.2 * cm,
    )
    document.build(
        story, onFirstPage=running_header_and_footer, onLaterPages=running_header_and_footer
    )


if __name__ == "__main__":
    build()
    print(OUT)

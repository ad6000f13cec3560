"""Fixture PDFs for heading detection on real brochures' patterns, built with reportlab.

A contact box sets its telephone lines in bold at the body size, spaced apart like a
sub-heading ("Zoetermeer: telefoonnummer (079) 346 2883"): a reader sees a contact detail.
"""

from __future__ import annotations

from tests.support.layout_pdfs import BOLD, FONT, Row, rows_pdf

LEADING = 14.0

TITLE = "Looptest op de loopband"
SUBHEADING = "Bijwerkingen"
PHONE_LINES = [
    "Den Haag: telefoonnummer (070) 210 2076",
    "Zoetermeer: telefoonnummer (079) 346 2883",
]


def bold_phone_lines_pdf() -> bytes:
    """18 pt title; 10 pt text; bold 10 pt telephone lines set apart; a bold 10 pt
    sub-heading set apart the same way."""
    rows: list[Row] = [
        (BOLD, 18, TITLE, 0.0),
        (FONT, 10, "Kunt u niet komen? Geef het dan zo snel mogelijk door aan de afdeling.", 2.0),
        (FONT, 10, "Dan kan een andere patient uw plaats krijgen. Bel bij voorkeur een dag", 1.0),
        (FONT, 10, "van tevoren, zodat de afdeling de planning kan aanpassen.", 1.0),
        (BOLD, 10, PHONE_LINES[0], 2.0),
        (BOLD, 10, PHONE_LINES[1], 2.0),
        (FONT, 10, "U kunt bellen op werkdagen tussen 08.00 en 16.30 uur. Buiten die tijden", 2.0),
        (FONT, 10, "spreekt u een bericht in; de afdeling belt u de volgende werkdag terug.", 1.0),
        (BOLD, 10, SUBHEADING, 2.0),
        (FONT, 10, "De meeste mensen hebben na de test weinig klachten.", 1.4),
        (FONT, 10, "Soms zijn de benen een dag wat moe.", 1.0),
    ]
    return rows_pdf(rows, LEADING)

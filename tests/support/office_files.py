"""Small Word documents and HTML pages made in the tests (no third-party files)."""

from __future__ import annotations

import io
import zipfile


def brochure_docx(title: str = "Knieoperatie") -> bytes:
    """A .docx with a title property, two heading levels, a bulleted list and a table."""
    import docx  # python-docx, a development dependency: only the tests build Word files

    document = docx.Document()
    document.core_properties.title = title
    document.add_heading("Knieoperatie", level=1)
    document.add_paragraph(
        "U krijgt binnenkort een nieuwe knie. Deze folder legt uit hoe dat gaat."
    )
    document.add_heading("Voorbereiding", level=2)
    for item in ("Neem uw medicijnlijst mee", "Draag makkelijke kleding", "Laat sieraden thuis"):
        document.add_paragraph(item, style="List Bullet")
    document.add_heading("Nuchter zijn", level=2)
    table = document.add_table(rows=3, cols=2)
    for row, cells in zip(
        table.rows,
        (("Wat", "Tot wanneer"), ("Eten", "6 uur voor de operatie"), ("Drinken", "2 uur ervoor")),
        strict=True,
    ):
        row.cells[0].text, row.cells[1].text = cells
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def with_parts(docx_bytes: bytes, **parts: bytes) -> bytes:
    """`docx_bytes` with parts added or replaced (`word/vbaProject.bin`, a broken XML)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(docx_bytes)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            if item.filename not in parts:
                dst.writestr(item, src.read(item.filename))
        for name, data in parts.items():
            dst.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def encrypted_docx(password: str = "geheim") -> bytes:
    """A real password-protected .docx (ECMA-376 agile encryption, as Word writes it)."""
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(brochure_docx())).encrypt(password, out)
    return out.getvalue()


ARTICLE_PAGE = """<!doctype html><html lang="nl"><head><title>Knieoperatie | Ziekenhuis</title>
<script>var tracking = 1;</script><style>body { color: black }</style></head><body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/afdelingen">Afdelingen</a></li>
<li><a href="/contact">Contact</a></li></ul></nav></header>
<main><article><h1>Knieoperatie</h1>
<p>U krijgt binnenkort een <strong>nieuwe knie</strong>. In deze folder leest u hoe de operatie
verloopt en wat u zelf kunt doen.</p>
<h2>Voorbereiding</h2><p>Stop twee weken voor de operatie met roken. Neem contact op met de
polikliniek als u bloedverdunners gebruikt.</p>
<ul><li>Neem uw medicijnlijst mee</li><li>Draag makkelijke kleding</li>
<li>Laat sieraden thuis</li></ul>
<h2>Nuchter zijn</h2><table><thead><tr><th>Wat</th><th>Tot wanneer</th></tr></thead><tbody>
<tr><td>Eten</td><td>6 uur voor de operatie</td></tr><tr><td>Helder drinken</td>
<td>2 uur voor de operatie</td></tr></tbody></table>
<h3>Na de operatie</h3><p>U blijft meestal twee nachten in het ziekenhuis. De fysiotherapeut
komt de eerste dag al langs.</p></article></main>
<aside><h2>Gerelateerd</h2><ul><li><a href="/heup">Heupoperatie</a></li></ul></aside>
<footer><p>Copyright Ziekenhuis 2026, privacyverklaring en cookiebeleid</p>
<p>Telefoon 088 123 45 67</p></footer></body></html>
"""

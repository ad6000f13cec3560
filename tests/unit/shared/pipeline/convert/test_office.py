"""Word documents and HTML pages to the Markdown the chunker takes."""

from __future__ import annotations

import pytest

from shared.errors import PermanentError
from shared.pipeline.convert import convert, detect_media_type
from shared.pipeline.convert.docx import DOCX_MEDIA_TYPE
from shared.pipeline.convert.html import HTML_MEDIA_TYPE
from shared.settings import Settings
from tests.support.office_files import ARTICLE_PAGE, brochure_docx, encrypted_docx, with_parts


def test_a_word_document_keeps_its_headings_list_and_table() -> None:
    data = brochure_docx(title="Knieoperatie (folder)")
    assert detect_media_type(data, "folder.docx") == DOCX_MEDIA_TYPE
    converted = convert(data, DOCX_MEDIA_TYPE, "folder.docx")
    markdown = converted.markdown
    assert "# Knieoperatie" in markdown
    assert "## Voorbereiding" in markdown and "## Nuchter zijn" in markdown
    assert "- Neem uw medicijnlijst mee\n- Draag makkelijke kleding" in markdown
    assert "| Wat | Tot wanneer |\n| --- | --- |\n| Eten | 6 uur voor de operatie |" in markdown
    assert converted.metadata["title"] == "Knieoperatie (folder)"


def test_a_word_document_is_recognised_by_its_bytes_not_its_name() -> None:
    assert detect_media_type(brochure_docx(), "folder.pdf") == DOCX_MEDIA_TYPE
    assert detect_media_type(brochure_docx(), None) == DOCX_MEDIA_TYPE


def code_of(data: bytes, settings: Settings | None = None) -> str:
    with pytest.raises(PermanentError) as refused:
        convert(data, detect_media_type(data, "x.docx"), "x.docx", settings=settings)
    return str(refused.value.code)


def test_a_password_protected_word_document_is_refused_as_such() -> None:
    assert code_of(encrypted_docx()) == "office_encrypted"


def test_a_macro_enabled_word_document_is_refused() -> None:
    assert code_of(with_parts(brochure_docx(), **{"word/vbaProject.bin": b"\x00" * 64})) == (
        "office_macros"
    )


def test_a_damaged_word_document_is_docx_corrupt() -> None:
    broken = with_parts(brochure_docx(), **{"word/document.xml": b"<w:document><unclosed"})
    assert code_of(broken) == "docx_corrupt"


def test_a_word_document_that_unpacks_beyond_the_limit_is_too_large() -> None:
    bomb = with_parts(brochure_docx(), **{"word/padding.xml": b" " * 5_000_000})
    assert len(bomb) < 100_000
    small = Settings(office_max_unpacked_bytes=1_000_000)
    assert code_of(bomb, small) == "too_large"


def test_an_html_page_keeps_its_article_and_drops_the_site_around_it() -> None:
    data = ARTICLE_PAGE.encode()
    assert detect_media_type(data, None) == HTML_MEDIA_TYPE
    converted = convert(data, HTML_MEDIA_TYPE, "knie.html")
    markdown = converted.markdown
    assert markdown.startswith("# Knieoperatie")
    assert "## Voorbereiding" in markdown and "### Na de operatie" in markdown
    assert "- Neem uw medicijnlijst mee" in markdown
    assert "| Eten | 6 uur voor de operatie |" in markdown
    for boilerplate in ("Afdelingen", "tracking", "cookiebeleid", "Gerelateerd", "color: black"):
        assert boilerplate not in markdown
    assert converted.metadata["title"].startswith("Knieoperatie")


def test_markdown_with_a_little_html_stays_markdown() -> None:
    text = b"# Bezoektijden\n\n<details><summary>Meer</summary>Van 14 tot 20 uur.</details>\n"
    assert detect_media_type(text, "bezoek.md") == "text/markdown"
    assert detect_media_type(b"<p>Alleen een alinea.</p>", "stuk.html") == HTML_MEDIA_TYPE


def test_an_html_page_without_text_is_html_no_content() -> None:
    page = b"<!doctype html><html><body><script>x()</script><img src='a.png'></body></html>"
    with pytest.raises(PermanentError) as refused:
        convert(page, HTML_MEDIA_TYPE, "leeg.html")
    assert refused.value.code == "html_no_content"

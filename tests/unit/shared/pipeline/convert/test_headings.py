"""Headings from fonts: bold at body size is a heading only where it stands apart."""

from __future__ import annotations

import re

from pypdf.generic import DictionaryObject, NameObject

from shared.pipeline.convert import convert
from shared.pipeline.convert.lines import _font_is_bold
from tests.support import layout_pdfs as fixtures

PDF = "application/pdf"
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def test_a_bold_subheading_set_apart_is_a_heading_and_bold_text_in_the_flow_is_not() -> None:
    markdown = convert(fixtures.bold_lines_pdf(), PDF).markdown
    headings = HEADING.findall(markdown)
    assert headings == ["Behandeling met bestraling", fixtures.BOLD_SUBHEADING], markdown
    assert f"{fixtures.BOLD_RUNNING_ON} koorts krijgt" in markdown


def test_a_medium_weight_font_counts_as_bold() -> None:
    font = DictionaryObject({NameObject("/BaseFont"): NameObject("/BAAAAA+KievitOT-Medium")})
    assert _font_is_bold(font)
    regular = DictionaryObject({NameObject("/BaseFont"): NameObject("/CAAAAA+ArialMT")})
    assert not _font_is_bold(regular)


def test_bold_says_nothing_when_the_body_text_is_bold() -> None:
    markdown = convert(fixtures.bold_body_pdf(), PDF).markdown
    assert HEADING.findall(markdown) == ["Afspraak maken"], markdown


def test_a_sentence_or_bold_line_with_nothing_under_it_is_text() -> None:
    """Set in a heading style right above the next heading: text, not an empty section."""
    markdown = convert(fixtures.empty_headings_pdf(), PDF).markdown
    headings = HEADING.findall(markdown)
    assert headings == ["Pijn na de ingreep", "Wat doet u bij pijn?", "Hoe lang duurt de pijn?"]
    assert fixtures.HEADING_SENTENCE in markdown and fixtures.BOLD_LAST_LINE in markdown


def test_a_title_broken_after_a_real_hyphen_keeps_the_hyphen_without_a_space() -> None:
    markdown = convert(fixtures.wrapped_title_pdf(), PDF).markdown
    assert markdown.startswith("# Leefregels bij het ABCD-syndroom\n"), markdown

"""What is embedded for a chunk: the heading path line, then the text."""

from __future__ import annotations

from shared.pipeline.embed import embedding_input


def test_heading_path_is_one_line_before_the_text() -> None:
    text = "Neem uw identiteitskaart mee."
    result = embedding_input(["Knieoperatie", "Voorbereiding"], text)
    assert result == "Knieoperatie > Voorbereiding\nNeem uw identiteitskaart mee."


def test_without_headings_only_the_text_is_embedded() -> None:
    assert embedding_input([], "Alleen tekst.") == "Alleen tekst."


def test_blank_headings_are_left_out_and_whitespace_trimmed() -> None:
    assert embedding_input(["  Knieoperatie ", "", "   "], "Tekst") == "Knieoperatie\nTekst"
    assert embedding_input(["", " "], "Tekst") == "Tekst"


def test_other_sections_the_chunk_covers_follow_the_path() -> None:
    sections = [
        {"headings": ["Knieoperatie", "Voorbereiding"], "char_start": 0, "char_end": 10},
        {"headings": ["Knieoperatie", "Herstel"], "char_start": 10, "char_end": 20},
        {"headings": ["Knieoperatie", "Nazorg"], "char_start": 20, "char_end": 30},
    ]
    result = embedding_input(["Knieoperatie", "Voorbereiding"], "Tekst", sections)
    assert result == "Knieoperatie > Voorbereiding; Herstel; Nazorg\nTekst"


def test_one_section_adds_nothing_and_no_path_still_names_the_sections() -> None:
    one = [{"headings": ["Knie"], "char_start": 0, "char_end": 5}]
    assert embedding_input(["Knie"], "Tekst", one) == "Knie\nTekst"
    two = [{"headings": [], "char_start": 0, "char_end": 5}, *one]
    assert embedding_input([], "Tekst", two) == "Knie\nTekst"

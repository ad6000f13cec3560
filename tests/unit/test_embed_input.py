"""What is embedded for a chunk: the heading path line, then the text (DESIGN.md, rule 8)."""

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

"""The chunker on the cases that broke other chunkers, one named test each."""

from __future__ import annotations

from itertools import pairwise

from shared.pipeline.chunk import Chunk, ChunkSettings, chunk_markdown
from shared.settings import Settings
from shared.tokens import count_tokens
from tests.support.chunks import check_chunks, chunks_of, fences_balanced, prose


def all_headings(chunks: list[Chunk]) -> set[str]:
    return {title for chunk in chunks for title in chunk.headings}


def test_hash_lines_inside_backtick_and_tilde_fences_are_not_headings() -> None:
    text = (
        "# Real\n\nIntro.\n\n```bash\n# not a heading\n## nor this\n```\n\n"
        "~~~\n# also code\n~~~\n\nEnd."
    )
    chunks = chunks_of(text)
    assert all_headings(chunks) == {"Real"}
    assert len(chunks) == 1
    assert "# not a heading\n## nor this" in chunks[0].text
    assert chunks[0].code_languages == ["bash"]
    assert chunks[0].kinds == ["heading", "text", "code"]


def test_four_backtick_fence_holds_a_three_backtick_line() -> None:
    text = "# Doc\n\n````markdown\n```python\n# inside\n```\n````\n\nAfter."
    chunks = chunks_of(text)
    assert all_headings(chunks) == {"Doc"}
    assert "````markdown\n```python\n# inside\n```\n````" in chunks[0].text
    assert chunks[0].code_languages == ["markdown"]


def test_fence_left_open_at_end_of_file_keeps_its_content() -> None:
    text = "# Doc\n\nIntro.\n\n```python\nprint('kept')\n# kept too"
    chunks = chunks_of(text)
    assert chunks[-1].new_text.endswith("print('kept')\n# kept too")
    assert chunks[-1].text.endswith("# kept too\n```")  # closed in the chunk, not in the source
    assert fences_balanced(chunks[-1].text)


def test_setext_headings_including_one_character_underline() -> None:
    text = (
        f"Title\n=====\n\n{prose(250)}\n\nPart\n-\n\n{prose(250, 1)}\n\n"
        f"Other\n===\n\n{prose(100, 2)}"
    )
    chunks = chunks_of(text)
    assert [c.headings for c in chunks] == [["Title"], ["Title", "Part"], ["Other"]]
    assert [c.heading_level for c in chunks] == [1, 2, 1]


def test_paragraph_followed_by_dashes_is_an_h2() -> None:
    chunks = chunks_of("# Top\n\nintro\n\nSub title\n---\n\ntext under it")
    assert chunks[0].kinds[0] == "heading"
    (chunk,) = chunks
    assert chunk.text.count("\n---") == 1
    chunks = chunk_markdown("Sub title\n---\n\ntext under it")
    assert chunks[0].headings == ["Sub title"] and chunks[0].heading_level == 2


def test_indented_hashes_are_code_and_hash_without_space_is_text() -> None:
    text = "# A\n\nText.\n\n    ## x\n\n#x is a hashtag\n"
    (chunk,) = chunks_of(text)
    assert all_headings([chunk]) == {"A"}
    assert "code" in chunk.kinds and "    ## x" in chunk.text
    assert "#x is a hashtag" in chunk.text


def test_closing_hashes_are_dropped_from_the_heading() -> None:
    (chunk,) = chunks_of("## T ##\n\nSome text.")
    assert chunk.headings == ["T"] and chunk.heading == "T" and chunk.heading_level == 2


def test_front_matter_becomes_metadata() -> None:
    text = "---\ntitle: Knieoperatie\ndate: 2024-05-01\ntags: [knie, ok]\n---\n# Knie\n\nTekst."
    (chunk,) = chunks_of(text)
    assert chunk.metadata == {"title": "Knieoperatie", "date": "2024-05-01", "tags": ["knie", "ok"]}
    assert "title:" not in chunk.text
    assert chunk.char_start == text.index("# Knie")


def test_unclosed_dashes_at_the_top_are_not_front_matter() -> None:
    text = "---\ntitle: not front matter\n\nBody text."
    (chunk,) = chunks_of(text)
    assert chunk.metadata == {}
    assert chunk.text.startswith("---\ntitle: not front matter")


def test_table_over_the_maximum_splits_between_rows_with_header_repeated() -> None:
    header = "| Medicine | Dose | When |\n|---|:---:|---|\n"
    rows = [f"| medicine {i} | {i} mg | before breakfast on day {i} |" for i in range(90)]
    text = "# Doses\n\n" + header + "\n".join(rows)
    chunks = chunks_of(text)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert chunk.kinds[-1] == "table"
        assert header in chunk.text
        own = chunk.new_text.split("\n")
        assert all(line in rows or line in header for line in own if line and line != "# Doses")
    assert chunks[1].text.index(header) < chunks[1].new_text_offset


def test_table_without_leading_pipes() -> None:
    text = "# T\n\nName | Dose\n-----|-----\nA | 1\nB | 2\n"
    (chunk,) = chunks_of(text)
    assert chunk.kinds == ["heading", "table"]


def test_admonition_holding_a_list_and_code() -> None:
    text = (
        "# Tips\n\n:::tip Before you come\n- bring your card\n- fast\n\n```sh\necho hi\n```\n:::\n"
    )
    (chunk,) = chunks_of(text)
    assert chunk.kinds == ["heading", "admonition", "list", "code"]
    assert chunk.admonition_types == ["tip"] and chunk.code_languages == ["sh"]
    assert chunk.text.endswith(":::")


def test_nested_admonition_with_four_colon_outer_fence() -> None:
    text = "::::note Outer\n:::warning Inner\nCareful.\n:::\nMore.\n::::\n\nAfter."
    (chunk,) = chunks_of(text)
    assert chunk.admonition_types == ["note", "warning"]


def test_admonition_over_the_maximum_is_split_and_reopened() -> None:
    body = "\n\n".join(prose(60, seed=i) for i in range(12))
    text = f"# Care\n\n:::danger Stop\n{body}\n\n```js\nlet x = 1\n```\n:::\n"
    chunks = chunks_of(text)
    assert len(chunks) >= 2
    for chunk in chunks:
        assert "admonition" in chunk.kinds
        assert chunk.text.count(":::danger Stop") >= 1
        assert chunk.text.rstrip().endswith(":::")


def test_heading_level_jump_and_empty_sections() -> None:
    text = "# A\n\n### C\n\nUnder C.\n\n# Empty\n\n# B\n\n## Empty two\n\n## D\n\nUnder D."
    chunks = chunks_of(text, ChunkSettings(min_tokens=0))
    paths = [c.headings for c in chunks]
    assert ["A", "C"] in paths
    assert ["B", "D"] in paths or ["B", "Empty two"] in paths
    chunks = chunks_of(text)  # with the minimum: no merge across an H1 for text, but the
    assert [c.headings for c in chunks] == [["A", "C"], ["B", "D"]]  # empty ones go forward
    assert chunks[1].new_text.startswith("# Empty\n\n# B")


def test_crlf_bom_tabs_and_nbsp_inside_code_are_kept_exactly() -> None:
    code = "```python\ndef f():\n\treturn\u00a0'x'  \n```"
    text = "\ufeff# Code\r\n\r\nIntro.\r\n\r\n" + code.replace("\n", "\r\n") + "\r\n"
    (chunk,) = chunks_of(text)
    assert code in chunk.text
    assert chunk.char_start == 0  # offsets are into the normalised text (BOM gone, LF)


def test_one_paragraph_of_3000_tokens_without_punctuation() -> None:
    paragraph = prose(3000, punctuation=False)
    assert count_tokens(paragraph) > 2900
    chunks = chunks_of("# Long\n\n" + paragraph)
    assert len(chunks) >= 8
    for chunk in chunks[1:]:
        assert 60 <= chunk.overlap_tokens <= 70
        assert chunk.text[chunk.new_text_offset - 1] == " "  # overlap ends where a word did
    assert all(c.headings == ["Long"] for c in chunks)


def test_cjk_and_emoji_text() -> None:
    cjk = "患者は手術の前日に病院に来てください。" * 60
    cjk += "膝の手術🦵のあとは安静にしてください🙂" * 40
    chunks = chunks_of("# 手術\n\n" + cjk)
    assert len(chunks) >= 2
    assert "".join(c.new_text for c in chunks).replace("\n", "").endswith("ください🙂")
    for chunk in chunks:
        chunk.text.encode("utf-8")  # no lone surrogate or cut character


def test_dutch_text_with_accents() -> None:
    zin = "Na de knieoperatie één week rust; daarna oefeningen met de fysiotherapeut, ook naïef. "
    text = "# Knieoperatie\n\n## Voorbereiding\n\n" + zin * 50
    text += "\n\n## Herstel\n\nCoördinatie oefenen."
    chunks = chunks_of(text)
    assert chunks[0].headings == ["Knieoperatie", "Voorbereiding"]
    assert "één" in chunks[0].text and "naïef" in chunks[0].text
    assert "Coördinatie" in chunks[-1].text


def test_html_comment_holding_a_hash() -> None:
    text = "# Page\n\n<!--\n# not a heading\n-->\n\nText."
    (chunk,) = chunks_of(text)
    assert all_headings([chunk]) == {"Page"}
    assert "html" in chunk.kinds


def test_link_reference_definitions_are_kept() -> None:
    text = '# Links\n\nSee [the leaflet][l].\n\n[l]: https://example.org/leaflet.pdf "Leaflet"\n'
    (chunk,) = chunks_of(text)
    assert '[l]: https://example.org/leaflet.pdf "Leaflet"' in chunk.text


def test_overlap_does_not_cross_h1_by_default_and_does_with_the_setting() -> None:
    text = "# One\n\n" + prose(300) + "\n\n# Two\n\n" + prose(300, seed=3)
    chunks = chunks_of(text)
    assert [c.overlap_tokens for c in chunks] == [0, 0]
    across = ChunkSettings(overlap_scope="document")
    chunks = chunks_of(text, across)
    assert chunks[0].overlap_tokens == 0 and 60 <= chunks[1].overlap_tokens <= 70
    overlap = chunks[1].text[: chunks[1].new_text_offset].rstrip()
    assert chunks[0].text.endswith(overlap) and chunks[1].new_text.startswith("# Two")


def test_overlap_repeats_the_end_of_the_previous_chunk() -> None:
    text = "# Long\n\n" + "\n\n".join(prose(120, seed=i) for i in range(10))
    chunks = chunks_of(text)
    assert len(chunks) >= 3
    for before, after in pairwise(chunks):
        overlap = after.text[: after.new_text_offset].rstrip()
        assert overlap and before.text.endswith(overlap)
        assert 60 <= after.overlap_tokens <= 70


def test_sections_split_at_h2_when_over_the_maximum() -> None:
    text = "# Knie\n\nIntro.\n\n" + "".join(f"## Deel {i}\n\n{prose(150, i)}\n\n" for i in range(4))
    chunks = chunks_of(text)
    starts = [c.new_text.split("\n", 1)[0] for c in chunks]
    assert all(start.startswith(("# Knie", "## Deel")) for start in starts)
    assert chunks[0].headings == ["Knie"]


def test_a_chunk_spanning_three_sections_names_all_three() -> None:
    text = (
        "# Knieoperatie\n\n## Voorbereiding\n\nNeem uw identiteitskaart mee.\n\n"
        "## Herstel\n\nRust een week.\n\n## Nazorg\n\nBel bij koorts de afdeling."
    )
    (chunk,) = chunks_of(text)
    assert chunk.headings == ["Knieoperatie", "Voorbereiding"]
    assert [s["headings"] for s in chunk.sections] == [
        ["Knieoperatie", "Voorbereiding"],
        ["Knieoperatie", "Herstel"],
        ["Knieoperatie", "Nazorg"],
    ]
    parts = [chunk.text[s["char_start"] : s["char_end"]] for s in chunk.sections]
    assert parts[0].startswith("# Knieoperatie") and "identiteitskaart" in parts[0]
    assert parts[1].startswith("## Herstel") and "Rust een week." in parts[1]
    assert parts[2] == "## Nazorg\n\nBel bij koorts de afdeling."


def test_overlap_from_the_section_before_is_named_in_sections() -> None:
    text = "# Long\n\n## One\n\n" + prose(330) + "\n\n## Two\n\n" + prose(300, seed=2)
    chunks = chunks_of(text, ChunkSettings(overlap_scope="h1"))
    second = chunks[1]
    assert second.headings == ["Long", "Two"] and second.overlap_tokens > 0
    assert [s["headings"] for s in second.sections] == [["Long", "One"], ["Long", "Two"]]
    assert second.sections[0]["char_end"] == second.new_text_offset


def test_small_section_stays_whole() -> None:
    text = "# Knie\n\n" + prose(200) + "\n\n## Deel\n\n" + prose(200, 5)
    (chunk,) = chunks_of(text)
    assert chunk.token_count <= 450


def test_same_input_same_output() -> None:
    text = "# A\n\n" + prose(2000) + "\n\n```py\n" + "x = 1\n" * 400 + "```\n"
    assert chunk_markdown(text) == chunk_markdown(text)


def test_settings_come_from_the_settings_class() -> None:
    settings = Settings(chunk_max_tokens=200, chunk_overlap_tokens=30, chunk_target_tokens=150)
    chunk_settings = ChunkSettings.from_settings(settings)
    assert chunk_settings.max_tokens == 200 and chunk_settings.overlap_tokens == 30
    chunks = chunks_of("# A\n\n" + prose(1000), chunk_settings)
    assert max(c.token_count for c in chunks) <= 200


def test_empty_and_front_matter_only_documents_have_no_chunks() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("  \n\n") == []
    assert chunk_markdown("---\ntitle: x\n---\n") == []


def test_to_dict_is_json_ready() -> None:
    import json

    (chunk,) = chunk_markdown("---\ndate: 2024-01-01\n---\n# A\n\ntext")
    data = json.loads(json.dumps(chunk.to_dict()))
    assert data["headings"] == ["A"] and data["metadata"] == {"date": "2024-01-01"}


def test_sections_of_a_split_h1_pack_together_or_stand_alone_by_setting() -> None:
    # An H1 section over the maximum splits at its H2s; small H2 sections pack toward the
    # target by default, and each starts a chunk of its own with CHUNK_PACK_SECTIONS=false.
    sections = "".join(
        f"## Deel {n}\n\n" + " ".join(f"zin{n}x{i} over de zorg." for i in range(10)) + "\n\n"
        for n in range(6)
    )
    text = "# Folder\n\n" + sections
    packed = chunk_markdown(text, ChunkSettings())
    alone = chunk_markdown(text, ChunkSettings(pack_sections=False))
    assert len(packed) < len(alone) == 6
    assert [c.headings for c in alone] == [["Folder", f"Deel {n}"] for n in range(6)]
    check_chunks(text, alone, ChunkSettings(pack_sections=False))
    assert Settings(chunk_pack_sections=False).chunk_pack_sections is False


def test_heading_stays_with_a_split_code_block_whose_first_piece_nearly_fills_a_chunk() -> None:
    """The first piece of a split code block, cut for a chunk on its own, no longer fits with
    the long heading in front: it is cut again (fences closed and reopened), not left behind
    with the heading alone at the end of the chunk before."""
    small = ChunkSettings(
        target_tokens=90, max_tokens=120, overlap_tokens=25, min_tokens=20, pack_sections=False
    )
    heading = "# " + " ".join(f"kop{i}" for i in range(14))
    code = "\n".join(" ".join(f"x{j}y{i}" for i in range(23)) for j in range(3))
    for closing in ("\n```", ""):  # closed, and left open at the end of the document
        text = f"Intro tekst hier.\n\n{heading}\n\n```\n{code}{closing}\n\nSlot.\n"
        chunks = chunk_markdown(text, small)
        check_chunks(text, chunks, small)
        assert not any(c.text.rstrip().endswith(heading) for c in chunks)
        led = next(c for c in chunks if heading in c.text)
        assert led.kinds == ["heading", "code"] and fences_balanced(led.text)

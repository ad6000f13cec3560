"""GFM tables as GitHub renders them.

The examples are inputs of the GFM spec's "Tables (extension)" section and of cmark-gfm's
test/extensions.txt (github/cmark-gfm; spec CC-BY-SA 4.0), copied as data; each is paired
with the blocks GitHub renders it as.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared.pipeline.chunk import ChunkSettings, chunk_markdown
from shared.pipeline.chunk.markdown_blocks import scan_blocks
from tests.support.chunks import check_chunks

ALIGNED = "aaa | bbb | ccc | ddd | eee\n:-- | --- | :-: | --- | --:\nfff | ggg | hhh | iii | jjj"
GFM_EXAMPLES = [
    # (input, [(kind, text of the block)])
    (
        "| foo | bar |\n| --- | --- |\n| baz | bim |",
        [("table", "| foo | bar |\n| --- | --- |\n| baz | bim |")],
    ),
    (
        "| abc | defghi |\n:-: | -----------:\nbar | baz",
        [("table", "| abc | defghi |\n:-: | -----------:\nbar | baz")],
    ),
    (
        "| f\\|oo  |\n| ------ |\n| b `\\|` az |\n| b **\\|** im |",
        [("table", "| f\\|oo  |\n| ------ |\n| b `\\|` az |\n| b **\\|** im |")],
    ),
    (
        "| abc | def |\n| --- | --- |\n| bar | baz |\n> bar",
        [("table", "| abc | def |\n| --- | --- |\n| bar | baz |"), ("quote", "> bar")],
    ),
    (
        "| abc | def |\n| --- | --- |\n| bar | baz |\nbar\n\nbar",
        [("table", "| abc | def |\n| --- | --- |\n| bar | baz |\nbar"), ("text", "bar")],
    ),
    (
        "| abc | def |\n| --- |\n| bar |",
        [("text", "| abc | def |\n| --- |\n| bar |")],
    ),
    (
        "| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |",
        [("table", "| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |")],
    ),
    ("| abc | def |\n| --- | --- |", [("table", "| abc | def |\n| --- | --- |")]),
    ("abc | def\n--- | ---\nxyz | ghi", [("table", "abc | def\n--- | ---\nxyz | ghi")]),
    (ALIGNED, [("table", ALIGNED)]),
    (
        "| a | b | c |\n| --- | --- | ---\n| x\n| a | b\n| 1 | 2 | 3 | 4 | 5 |",
        [("table", "| a | b | c |\n| --- | --- | ---\n| x\n| a | b\n| 1 | 2 | 3 | 4 | 5 |")],
    ),
    ("| a |\n--- |", [("table", "| a |\n--- |")]),
    (
        "123\n456\n| a | b |\n| ---| --- |\nd | e",
        [("text", "123\n456"), ("table", "| a | b |\n| ---| --- |\nd | e")],
    ),
    (
        "| Not enough table | to be considered table |\n\n|x|\n|-|",
        [("text", "| Not enough table | to be considered table |"), ("table", "|x|\n|-|")],
    ),
    # Not tables: a setext heading with a pipe in its title, and one without.
    ("a | b\n---", [("heading", "a | b\n---")]),
    ("Title\n---", [("heading", "Title\n---")]),
]


@pytest.mark.parametrize(("text", "expected"), GFM_EXAMPLES, ids=range(len(GFM_EXAMPLES)))
def test_gfm_spec_table_examples_are_the_blocks_github_renders(
    text: str, expected: list[tuple[str, str]]
) -> None:
    blocks = scan_blocks(text)
    assert [(b.kind, text[b.start : b.end]) for b in blocks] == expected
    check_chunks(text, chunk_markdown(text))


def corpus_pages_table() -> str:
    """A long real table without leading or trailing pipes: the test corpus' own pages.

    One row per page (folder, file, title and source from its front matter), written the way
    many READMEs write tables (`a | b` over `--- | ---`), some rows ragged.
    """
    corpus = Path(__file__).resolve().parents[4] / "corpus"
    rows = ["Folder | Page | Title | Source", ":--- | --- | --- | ---:"]
    for number, path in enumerate(sorted(corpus.rglob("*.md"))):
        if path.name == "README.md":
            continue
        head = path.read_text(encoding="utf-8")[:800]
        title = re.search(r"^title:\s*\"?([^\"\n]*)", head, re.M)
        source = re.search(r"^(?:source_url|permalink|href):\s*(\S+)", head, re.M)
        cells = [path.parent.name, path.stem, title.group(1) if title else path.stem]
        if number % 7 != 3:  # some rows leave the last cell out (GFM pads them)
            cells.append(source.group(1) if source else "-")
        rows.append(" | ".join(cells))
    return "\n".join(rows)


def test_long_table_without_leading_pipes_splits_between_rows_with_its_header() -> None:
    table = corpus_pages_table()
    text = "# Pages\n\nThe pages of the test corpus.\n\n" + table + "\n\nAfter the table."
    small = ChunkSettings(target_tokens=200, max_tokens=260, overlap_tokens=40, min_tokens=20)
    for settings in (ChunkSettings(), small):
        chunks = chunk_markdown(text, settings)
        check_chunks(text, chunks, settings)
        rows = set(table.split("\n"))
        header = "\n".join(table.split("\n")[:2]) + "\n"
        in_table = [c for c in chunks if "table" in c.kinds]
        assert len(in_table) >= 2
        for chunk in in_table:
            assert header in chunk.text, "every part of the table starts with its header rows"
            table_part = chunk.text[chunk.text.index(header) :].split("\n\n")[0]
            assert set(table_part.split("\n")) <= rows, "only whole rows"

"""The chunker's shortcuts give what the slow paths gave.

Container children (list items, quotes, admonitions) are parsed only when a line could open
a kind the metadata reports; the tokens and counts of blocks, overlaps, chunk tails and
final texts are read from one encode of the document (`doc_tokens`) at positions where
cl100k_base's pieces cannot cross (`token_sums`). Our parser's own list parser and block
search are compared with mistune's in `test_mistune_paths`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.pipeline.chunk import ChunkSettings, chunk_markdown
from shared.pipeline.chunk.doc_tokens import DocTokens, _starts_of
from shared.pipeline.chunk.markdown_blocks import normalise, scan_blocks
from shared.pipeline.chunk.packing import Packer
from shared.pipeline.chunk.token_sums import (
    block_tail,
    is_seam,
    joined_tokens,
    last_seam,
    tail_seam,
)
from shared.tokens import encoding
from tests.support.chunks import check_chunks


def only_block(text: str):
    (block,) = scan_blocks(text)
    return block


@pytest.mark.parametrize(
    ("text", "inner", "languages"),
    [
        ("- bring your card\n- fasting from midnight\n", (), ()),
        ("- step one\n\n  ```python\n  print(1)\n  ```\n- step two\n", ("code",), ("python",)),
        ("1. take\n2. the pill:\n\n       indented code\n", ("code",), ()),
        ("- outer\n  - inner\n  - inner two\n", (), ()),
        ("- quoted:\n  > a nurse said\n", ("quote",), ()),
        ("- a\n  ~~~sh\n  echo\n  ~~~\n", ("code",), ("sh",)),
    ],
)
def test_list_reports_the_kinds_inside(text: str, inner: tuple, languages: tuple) -> None:
    block = only_block(text)
    assert block.kind == "list"
    assert block.inner_kinds == inner
    assert block.languages == languages


def test_quote_with_a_list_and_code_inside() -> None:
    block = only_block("> Remember:\n> - your card\n>\n> ```js\n> code line\n> ```\n")
    assert block.kind == "quote"
    assert block.inner_kinds == ("list", "code")
    assert block.languages == ("js",)


def test_plain_quote_reports_nothing_inside() -> None:
    assert only_block("> Just words here.\n> More words.\n").inner_kinds == ()


def test_admonition_with_a_table_and_a_nested_admonition() -> None:
    text = "::::tip Dose\n| a | b |\n|---|---|\n| 1 | 2 |\n\n:::note Inner\nx\n:::\n::::\n"
    block = only_block(text)
    assert block.kind == "admonition"
    assert block.inner_kinds == ("table",)  # its own kind is not repeated
    assert block.admonitions == ("tip", "note")


def test_list_item_code_fence_is_reported_on_the_chunk() -> None:
    text = "# Prep\n\n- wash\n- then run:\n\n  ```bash\n  ./prepare\n  ```\n- done\n"
    (chunk,) = chunk_markdown(text)
    assert chunk.kinds == ["heading", "list", "code"]
    assert chunk.code_languages == ["bash"]


def test_oversized_list_still_splits_between_items() -> None:
    items = [
        f"- item {i}: bring the form, your card and the list of medicines number {i}"
        for i in range(120)
    ]
    text = "# List\n\n" + "\n".join(items) + "\n"
    chunks = chunk_markdown(text)
    check_chunks(text, chunks)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert "list" in chunk.kinds
        own = chunk.new_text.split("\n")
        assert all(line in items for line in own if line and line != "# List")


_PIECES = st.sampled_from(
    [
        "a", "Zo", "7", "42", ".", ",", "!?", "'s", "'ll", "(", ")", "`", "```", "|", "#",
        " ", "  ", "\t", "\n", "\n\n", "   \n", "\u00a0", "é", "e\u0301", "手術", "🙂", "\x1c",
        "-", "* ", "1. ", "    ", "word", " word", "http://x.org/a?b=c",
    ]
)  # fmt: skip
_TEXT = st.lists(_PIECES, min_size=1, max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_counts_add_up_at_every_seam(text: str) -> None:
    enc = encoding()
    whole = enc.encode_ordinary(text)
    seams = [p for p in range(1, len(text)) if is_seam(text, p)]
    seams += [block_tail(text, 0, len(text)), last_seam(text, 0, len(text))]
    seams += [tail_seam(text, 0, end) for end in range(len(text) + 1)]
    for pos in seams:
        assert enc.encode_ordinary(text[:pos]) + enc.encode_ordinary(text[pos:]) == whole


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from(["", " ", "\n", "\n\n", "  \n\n", "\n\n\n"]))
def test_joined_tokens_is_the_count_of_the_join(text: str, gap: str) -> None:
    enc = encoding()
    expected = len(enc.encode_ordinary(text + gap)) - len(enc.encode_ordinary(text))
    assert joined_tokens(text, gap) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_TEXT, min_size=1, max_size=12).map("\n".join),
    st.integers(0, 10_000),
    st.integers(0, 10_000),
    st.integers(0, 10_000),
    st.integers(0, 90),
)
def test_doc_tokens_of_a_slice_are_its_own_encode(
    text: str, origin: int, start: int, end: int, count: int
) -> None:
    enc = encoding()
    origin = origin % (len(text) + 1)
    start, end = sorted(
        (origin + start % (len(text) - origin + 1), origin + end % (len(text) - origin + 1))
    )
    doc = DocTokens(text, origin)
    expected = enc.encode_ordinary(text[start:end])
    assert doc.tokens(start, end) == expected
    assert doc.count(start, end) == len(expected)
    assert doc.counts([(start, end), (origin, len(text))]) == [
        len(expected),
        doc.count(origin, len(text)),
    ]
    assert doc.last_tokens(start, end, count) == (expected[-count:] if count else [])
    offsets = enc.decode_with_offsets(expected)[1] if expected else []
    assert doc.token_starts(start, end) == [start + offset for offset in offsets]


def test_one_encode_per_document_gives_every_blocks_own_encode() -> None:
    enc = encoding()
    sliced = 0
    for path in sorted((Path(__file__).parents[4] / "corpus").rglob("*.md")):
        source = normalise(path.read_text(encoding="utf-8"))
        blocks = scan_blocks(source)
        doc = DocTokens(source, blocks[0].start)
        for block in blocks:
            expected = enc.encode_ordinary(source[block.start : block.end])
            assert doc.tokens(block.start, block.end) == expected
            sliced += doc._parts(block.start, block.end) is not None
        packer = Packer(source, blocks, ChunkSettings())
        assert packer.tokens == [len(enc.encode_ordinary(source[b.start : b.end])) for b in blocks]
    assert sliced > 500  # most blocks really come from the document's encode


def test_text_tiktoken_repairs_slices_like_its_own_encode() -> None:
    text = "Lone \ud800 surrogate in a sentence that is long enough to be sliced. " * 3
    doc = DocTokens(text)
    for start, end in [(0, len(text)), (5, 150), (7, 120), (60, 200)]:
        assert doc.tokens(start, end) == encoding().encode_ordinary(text[start:end])


def test_chunk_counts_are_exact_with_overlap_and_small_settings() -> None:
    text = "# A\n\n" + "\n\n".join(
        f"Paragraph {i} ends with punctuation {'.!?'[i % 3]}" * 6 for i in range(40)
    )
    small = ChunkSettings(target_tokens=60, max_tokens=80, overlap_tokens=20, min_tokens=10)
    chunks = chunk_markdown(text, small)
    check_chunks(text, chunks, small)
    assert len(chunks) > 5 and all(chunk.overlap_tokens > 0 for chunk in chunks[1:])


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_token_starts_match_tiktokens_offsets(text: str) -> None:
    enc = encoding()
    tokens = enc.encode_ordinary(text)
    assert _starts_of(text, 0) == enc.decode_with_offsets(tokens)[1]

"""Our mistune parser's own list parser and block search give mistune's own tokens.

`list_items.parse_list` is mistune's list parser without its per-item overheads, and the
parser's loop tries only line starts where mistune searches for the next block; both are
installed on our parser instance only. Here the same random Markdown (list-heavy: nesting,
tabs, ordered markers, lazy lines, code and quotes in items) goes through our parser and
through one that keeps mistune's own methods, and every token must be the same.
"""

from __future__ import annotations

import mistune
from hypothesis import given, settings
from hypothesis import strategies as st
from mistune import list_parser
from mistune.block_parser import BlockParser, _is_plain_paragraph_start
from mistune.core import BlockState

from shared.pipeline.chunk import list_items
from shared.pipeline.chunk.markdown_blocks import (
    _MARKDOWN,
    _make_markdown,
    _next_block,
    _paragraph_end,
    _PositionedState,
)
from tests.support.chunks import markdown_documents

_REFERENCE = _make_markdown(fast=False)  # mistune's own list parser and block search

_INDENT = st.sampled_from(["", "", "", " ", "  ", "   ", "    ", "      ", "\t", " \t", "\t\t"])
_MARKER = st.sampled_from(
    ["", "", "- ", "* ", "+ ", "1. ", "2) ", "10. ", "-\t", "- [ ] ", "-", "1.", "> ", "> - "]
)
_START = st.sampled_from(
    ["", "", "", "```", "~~~py", "    code", "# h", "---", "***", "| a | b |", "|---|---|",
     ":::note", ":::", "<div>", "</div>", "[x]: /u", "===", "\t"]
)  # fmt: skip
_WORDS = st.lists(
    st.sampled_from(["alpha", "één", "x", "🙂", "`c`", "**b**", "end.", "1.", "-", "a  b", "\t"]),
    max_size=5,
).map(" ".join)
_LINE = st.tuples(_INDENT, _MARKER, _START, _WORDS).map("".join)
_LIST_HEAVY = st.lists(_LINE, min_size=1, max_size=40).map("\n".join)


def _tokens(markdown: mistune.Markdown, text: str) -> tuple[list, int]:
    state = _PositionedState()
    state.process(text if text.endswith("\n") else text + "\n")
    markdown.block.parse(state)
    return state.tokens, state.cursor


@settings(max_examples=600, deadline=None)
@given(_LIST_HEAVY)
def test_list_heavy_markdown_parses_as_with_mistunes_own_methods(text: str) -> None:
    assert _tokens(_MARKDOWN, text) == _tokens(_REFERENCE, text)


@settings(max_examples=200, deadline=None)
@given(markdown_documents())
def test_generated_documents_parse_as_with_mistunes_own_methods(text: str) -> None:
    text = text.replace("\r\n", "\n")
    assert _tokens(_MARKDOWN, text) == _tokens(_REFERENCE, text)


def test_nested_lists_and_code_in_items_parse_alike() -> None:
    text = (
        "- a\n  - b\n\t- c\n\n    ```py\n    x\n    ```\n1. one\n2) two\n   > quote\n"
        "- lazy\ncontinued\n\n\n- after blanks\n* other bullet\n---\n- [ ] task\n"
    )
    assert _tokens(_MARKDOWN, text) == _tokens(_REFERENCE, text)


_ODD_LINES = st.lists(
    st.one_of(_LINE, st.sampled_from(["", " ", "\t", "\u00a0", "\x1c", "  \u2003 ", "a\u00a0"])),
    min_size=1,
    max_size=30,
).map("\n".join)


@settings(max_examples=400, deadline=None)
@given(_ODD_LINES, st.integers(0, 2_000), st.booleans())
def test_line_start_searches_are_mistunes(text: str, pos: int, nested: bool) -> None:
    block = _MARKDOWN.block
    sc = block.compile_sc(block.list_rules if nested else None)
    pos = pos % (len(text) + 1)
    found, expected = _next_block(sc, text, pos), sc.search(text, pos)
    assert (found and (found.span(), found.lastgroup)) == (
        expected and (expected.span(), expected.lastgroup)
    )
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    for start in starts:
        if _is_plain_paragraph_start(text, start):
            state = BlockState()
            state.process(text)
            state.cursor = start
            assert BlockParser._parse_plain_paragraph(block, state, sc)
            assert _paragraph_end(sc, text, start) == state.cursor


def test_patterns_are_made_once_and_are_mistunes() -> None:
    patterns = _MARKDOWN.block.list_patterns
    assert isinstance(patterns, list_items.ListPatterns)
    for width in range(7):
        made = patterns.breaker(width)
        assert patterns.breaker(width) is made
        assert made.pattern == list_parser._compile_list_break_sc(_MARKDOWN.block, width).pattern
        item = patterns.item("-", width)
        assert patterns.item("-", width) is item
        assert item.pattern == list_parser._compile_list_item_pattern("-", width)
    assert patterns.indent(3).sub("", "   a\n    b\n  c\n") == "a\n b\n  c\n"


def test_mistune_itself_is_left_alone() -> None:
    for name in ("_compile_list_break_sc", "_count_indent", "_has_continuation_indent"):
        assert not hasattr(getattr(list_parser, name), "__wrapped__"), name
    assert _REFERENCE.block.list_patterns is None and not _REFERENCE.block.anchored
    plain = mistune.create_markdown(renderer=None)
    tokens = plain("- a\n\t- b\n")
    assert isinstance(tokens, list) and tokens[0]["type"] == "list"

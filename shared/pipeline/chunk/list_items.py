"""mistune 3's list parser, for our parser only, without its per-item Python overheads.

mistune parses each list item (7,828 in the benchmark corpus) by compiling two regexes by
name (`re`'s cache lookup each time), collecting the item's lines by string concatenation,
then rebuilding its source line by line with helpers that measure indentation column by
column. `parse_list` below is mistune's `list_parser.parse_list` with the same steps and
decisions, except: both regexes are made once per indent (the parser's rules are final once
`markdown_blocks` has made it), lines go into a list, and on text without a tab the
indentation is just the leading spaces (tabs take mistune's own helpers). It is installed
as our parser's `parse_list` method only; mistune itself is left as it is.

A property test parses random list-heavy Markdown with this and with mistune's own
`parse_list` and compares every token. Should mistune's private helpers move, `available`
is False and our parser keeps mistune's own method.
"""

from __future__ import annotations

import re
from typing import Any

try:
    from mistune.list_parser import (
        _LINE_HAS_TEXT,
        _compile_continue_width,
        _compile_list_break_sc,
        _compile_list_item_pattern,
        _create_list_marker,
        _expand_leading_tabs,
        _get_list_bullet,
        _has_continuation_indent,
        _is_loose_list,
        _ListMarker,
        _transform_tight_list,
    )
    from mistune.list_parser import (
        _build_list_item_source as _mistune_item_source,
    )
    from mistune.util import strip_end

    available = True
except ImportError:  # pragma: no cover - another mistune: keep its own list parser
    available = False

from mistune.block_parser import BlockParser
from mistune.core import BlockState


class ListPatterns:
    """The two regexes mistune makes per list item, made once per key for one parser."""

    def __init__(self, block: BlockParser, children: re.Pattern[str] | None = None) -> None:
        self.block = block
        # Items whose source this does not match get no children: the parser's own `parse`
        # would make none (see `markdown_blocks`), so their child state is not even made.
        self.children = children
        self.items: dict[tuple[str, int], re.Pattern[str]] = {}
        self.breaks: dict[int, re.Pattern[str]] = {}
        self.dedent: dict[int, re.Pattern[str]] = {}

    def item(self, bullet: str, leading_width: int) -> re.Pattern[str]:
        key = (bullet, leading_width)
        pattern = self.items.get(key)
        if pattern is None:
            pattern = re.compile(_compile_list_item_pattern(bullet, leading_width))
            self.items[key] = pattern
        return pattern

    def breaker(self, leading_width: int) -> re.Pattern[str]:
        pattern = self.breaks.get(leading_width)
        if pattern is None:
            pattern = self.breaks[leading_width] = _compile_list_break_sc(self.block, leading_width)
        return pattern

    def indent(self, columns: int) -> re.Pattern[str]:
        """`columns` leading spaces at the start of any line."""
        pattern = self.dedent.get(columns)
        if pattern is None:
            pattern = self.dedent[columns] = re.compile(f"^ {{{columns}}}", re.M)
        return pattern


def parse_list(
    block: BlockParser, patterns: ListPatterns, m: re.Match[str], state: BlockState
) -> int:
    """mistune's `parse_list` (3.4), with `_parse_list_item` below."""
    item = _create_list_marker(m, "list")
    text = item.text
    if not text.strip():
        end_pos: int | None = state.append_paragraph()
        if end_pos:
            return end_pos

    marker = item.marker
    depth = state.depth()
    token: dict[str, Any] = {
        "type": "list",
        "children": [],
        "tight": True,
        "bullet": item.bullet,
        "attrs": {"depth": depth, "ordered": item.ordered},
    }
    if item.ordered:
        start = int(marker[:-1])
        if start != 1:
            end_pos = state.append_paragraph()
            if end_pos:
                return end_pos
            token["attrs"]["start"] = start

    state.cursor = m.end() + 1
    item_or_none: _ListMarker | None = item
    if depth >= block.max_nested_level - 1:
        rules = [rule for rule in block.list_rules if rule not in ("list", "block_quote")]
    else:
        rules = block.list_rules

    bullet = _get_list_bullet(item.bullet)
    while item_or_none:
        item_or_none = _parse_list_item(block, patterns, bullet, item_or_none, token, state, rules)

    end_pos = token.pop("_end_pos", None)
    _transform_tight_list(token)
    if end_pos:
        index = token.pop("_tok_index")
        state.tokens.insert(index, token)
        return end_pos

    state.append_token(token)
    return state.cursor


def _parse_list_item(
    block: BlockParser,
    patterns: ListPatterns,
    bullet: str,
    item: _ListMarker,
    token: dict[str, Any],
    state: BlockState,
    rules: list[str],
) -> _ListMarker | None:
    leading_width = len(item.spaces) + len(item.marker)
    text, continue_width = _continue_width(item.text, leading_width)
    list_item_re = patterns.item(bullet, leading_width)
    break_sc = patterns.breaker(leading_width)

    lines, next_item, loose, end_pos, token_index = _collect_lines(
        block, list_item_re, break_sc, state, text, continue_width
    )
    if loose:
        token["tight"] = False
    if end_pos is not None:
        token["_tok_index"] = token_index
        token["_end_pos"] = end_pos

    src = "".join(lines)
    if "\t" in src:
        source = _mistune_item_source(text, src, continue_width)
    else:  # tab-free: a line with enough leading spaces loses `continue_width` of them
        source = strip_end(text + patterns.indent(continue_width).sub("", src))
    if patterns.children is not None and not patterns.children.search(source):
        children: list[dict[str, Any]] = []
    else:
        child = state.child_state(source)
        block.parse(child, rules)
        children = child.tokens

    if token["tight"] and _is_loose_list(children):
        token["tight"] = False
    token["children"].append({"type": "list_item", "children": children})
    return next_item


def _continue_width(text: str, leading_width: int) -> tuple[str, int]:
    """mistune's `_compile_continue_width`: tabs expanded from the marker's column."""
    if "\t" in text:
        return _compile_continue_width(text, leading_width)
    if _LINE_HAS_TEXT.match(text):
        indent = len(text) - len(text.lstrip(" "))
        space_width = 1 if indent >= 5 else indent
        return text[space_width:] + "\n", leading_width + space_width
    return "", leading_width + 1


def _collect_lines(
    block: BlockParser,
    list_item_re: re.Pattern[str],
    break_sc: re.Pattern[str],
    state: BlockState,
    text: str,
    continue_width: int,
) -> tuple[list[str], _ListMarker | None, bool, int | None, int | None]:
    """mistune's `_collect_list_item_lines`: (lines, next item, loose, end, token index)."""
    lines: list[str] = []
    prev_blank_line = False
    src = state.src
    blank = block.BLANK_LINE.match
    while state.cursor < state.cursor_max:
        cursor = state.cursor
        newline = src.find("\n", cursor)
        next_pos = len(src) if newline < 0 else newline + 1
        raw_line = src[cursor:next_pos]
        if blank(raw_line):
            lines.append("\n")
            prev_blank_line = True
            state.cursor = next_pos
            continue

        if "\t" in raw_line:
            has_continuation = _has_continuation_indent(raw_line, continue_width)
        else:
            indent = len(raw_line) - len(raw_line.lstrip(" "))
            has_continuation = indent >= continue_width and indent > 0
        if has_continuation:
            if prev_blank_line and not text and not "".join(lines).strip():
                break  # a list item can begin with at most one blank line
            lines.append(raw_line)
            prev_blank_line = False
            state.cursor = next_pos
            continue

        # mistune's `_match_list_item_break`, on the line with its leading tabs expanded
        found = break_sc.match(src, cursor)
        if found and found.lastgroup == "thematic_break":
            kind: str | None = "thematic_break"
        else:
            line = _expand_tabs(raw_line)
            item = list_item_re.match(line)
            if item:
                state.cursor = next_pos
                return lines, _create_list_marker(item, "listitem"), prev_blank_line, None, None
            kind = found.lastgroup if found else None
        if kind is not None:
            assert found is not None
            if kind == "list":
                break
            token_index = len(state.tokens)
            end_pos = block.parse_method(found, state)
            if end_pos:
                return lines, None, False, end_pos, token_index

        if prev_blank_line:
            break  # not a continuation line, and the previous line is blank
        lines.append(raw_line)
        state.cursor = next_pos
    return lines, None, False, None, None


def _expand_tabs(line: str) -> str:
    return _expand_leading_tabs(line) if "\t" in line else line

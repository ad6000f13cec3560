"""Markdown blocks with exact source offsets, from mistune 3's block parser.

mistune gives no positions and rendering its AST back to Markdown changes the text, so the
parser below records where each top-level token starts and ends (the block parser's cursor)
and the chunker slices the source itself. Whatever the tagging misses (it should miss
nothing) is still kept: every non-blank gap between tagged blocks becomes a text block.

Offsets are into the *normalised* source: BOM stripped, CRLF and CR turned into LF
(`normalise`). Front matter is parsed in `shared.pipeline.front_matter`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import mistune
from mistune.block_parser import BlockParser, _is_plain_paragraph_start
from mistune.core import BlockState

from shared.pipeline.chunk import gfm_table, list_items
from shared.pipeline.chunk.budget import check

_ADMONITION_OPEN = (
    r"^ {0,3}(?P<adm_colons>:{3,})[ \t]*(?P<adm_name>[A-Za-z][\w-]*)(?P<adm_title>[^\n]*)$"
)
_CONTAINER_OPEN = re.compile(r"^ {0,3}(:{3,})[ \t]*[A-Za-z]")
_CONTAINER_CLOSE = re.compile(r"^ {0,3}(:{3,})[ \t]*$")
# Lines that may open what chunk metadata reports inside a container (code, quote, list;
# with all rules also tables and admonitions). Supersets: a false hit only costs a parse.
_NESTED_TRIGGER = re.compile(
    r"^(?: {0,3}(?:`{3}|~{3}|>|[*+-](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))| {4}| *\t)", re.M
)
_CONTAINER_TRIGGER = re.compile(_NESTED_TRIGGER.pattern + r"|\||:::", re.M)
FENCE_LINE = re.compile(r"^(?P<indent> {0,3})(?P<marker>`{3,}|~{3,})(?P<info>[^\n]*)$")


def normalise(text: str) -> str:
    """The text chunk offsets refer to: BOM stripped, CRLF and lone CR turned into LF."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


@dataclass(frozen=True, slots=True)
class Block:
    """One top-level Markdown block: `source[start:end]` is its exact text."""

    kind: str  # heading, text, code, table, list, quote, html, admonition
    start: int
    end: int
    level: int = 0  # heading level (1-6)
    title: str = ""  # heading text, closing hashes and markup around it removed
    languages: tuple[str, ...] = ()  # code languages in the block (fenced info strings)
    admonitions: tuple[str, ...] = ()  # admonition types in the block
    inner_kinds: tuple[str, ...] = ()  # kinds nested inside (a list in an admonition...)


def _parse_admonition(parser: BlockParser, m: re.Match[str], state: BlockState) -> int | None:
    """`:::type [title]` ... `:::` (Docusaurus); outer fences may use more colons (`::::`)."""
    colons = len(m.group("adm_colons"))
    body_start = state.find_line_end_at(m.start())
    end = _find_container_close(state.src, body_start, colons)
    if end is None:
        return None  # unclosed: the opening line stays an ordinary paragraph
    close_line_start, close_line_end = end
    child = state.child_state(state.src[body_start:close_line_start])
    parser.parse(child)
    title = m.group("adm_title").strip()
    token = {"type": "admonition", "name": m.group("adm_name").lower(), "title": title}
    token["children"] = child.tokens
    state.append_token(token)
    return close_line_end


def _find_container_close(src: str, pos: int, colons: int) -> tuple[int, int] | None:
    """Start and end of the line closing an admonition, skipping code fences and nested ones."""
    nested: list[int] = []
    fence: tuple[str, int] | None = None
    while pos < len(src):
        line_end = src.find("\n", pos)
        line_end = len(src) if line_end < 0 else line_end + 1
        line = src[pos:line_end].rstrip("\n")
        fence_match = FENCE_LINE.match(line)
        if fence is not None:
            if fence_match and _closes_fence(fence_match, fence):
                fence = None
        elif fence_match and not (fence_match["marker"][0] == "`" and "`" in fence_match["info"]):
            fence = (fence_match["marker"][0], len(fence_match["marker"]))
        elif opened := _CONTAINER_OPEN.match(line):
            nested.append(len(opened.group(1)))
        elif closed := _CONTAINER_CLOSE.match(line):
            count = len(closed.group(1))
            if nested:
                if count >= nested[-1]:
                    nested.pop()
            elif count >= colons:
                return pos, line_end
        pos = line_end
    return None


def _closes_fence(match: re.Match[str], fence: tuple[str, int]) -> bool:
    marker = match["marker"]
    return marker[0] == fence[0] and len(marker) >= fence[1] and not match["info"].strip()


class _PositionedState(BlockState):
    """Block state that tags top-level paragraphs with their source span."""

    def add_paragraph(self, text: str) -> None:
        last = self.last_token()
        extends = last is not None and last["type"] == "paragraph"
        super().add_paragraph(text)
        if self.parent is None:
            if not extends:
                self.tokens[-1]["_start"] = self.cursor
            self.tokens[-1]["_end"] = self.cursor + len(text)

    def append_paragraph(self) -> int | None:
        end = super().append_paragraph()
        if end and self.parent is None:
            self.tokens[-1]["_end"] = end
        return end


class _PositionedParser(BlockParser):
    """Block parser that records the cursor span of every top-level token it makes."""

    list_patterns: list_items.ListPatterns | None = None  # our list parser (`_make_markdown`)
    anchored = False  # every rule matches only at a line start (`_make_markdown` checks)

    def parse(self, state: BlockState, rules: list[str] | None = None) -> None:
        # A container's extent never depends on its children's parse (mistune collects
        # item, quote and admonition lines first), and chunk metadata only needs the kinds
        # inside: skip the child parse when no line could open one of them.
        if state.parent is not None:
            trigger = _NESTED_TRIGGER if rules is not None else _CONTAINER_TRIGGER
            if not trigger.search(state.src):
                state.cursor = state.cursor_max
                return
        if not self.anchored:
            super().parse(state, rules)
            return
        # mistune's `BlockParser.parse` (3.4) except where it searches for the next block:
        # its rules all start with `^`, so only line starts need trying (`_next_block`).
        if rules is None:
            rules = self.rules
        sc = self.compile_sc(rules)
        indent_code = "indent_code" in rules
        top = state.parent is None
        while state.cursor < state.cursor_max:
            if top:
                check()
            if indent_code:
                end_pos = self._parse_indent_code_fast(state)
                if end_pos is not None:
                    state.cursor = end_pos
                    continue
            m = sc.match(state.src, state.cursor)
            if not m and _is_plain_paragraph_start(state.src, state.cursor):
                end_pos = _paragraph_end(sc, state.src, state.cursor)
                state.add_paragraph(state.get_text(end_pos))
                state.cursor = end_pos
                continue
            if not m:
                m = _next_block(sc, state.src, state.cursor)
            if not m:
                break
            end_pos = m.start()
            if end_pos > state.cursor:
                state.add_paragraph(state.get_text(end_pos))
                state.cursor = end_pos
            end_pos2 = self.parse_method(m, state)
            if end_pos2:
                state.cursor = end_pos2
            else:
                end_pos3 = state.find_line_end()
                state.add_paragraph(state.get_text(end_pos3))
                state.cursor = end_pos3
        if state.cursor < state.cursor_max:
            state.add_paragraph(state.src[state.cursor :])
            state.cursor = state.cursor_max

    def parse_list(self, m: re.Match[str], state: BlockState) -> int:
        if self.list_patterns is None:
            return super().parse_list(m, state)
        return list_items.parse_list(self, self.list_patterns, m, state)

    def parse_method(self, m: re.Match[str], state: BlockState) -> int | None:
        # as mistune's own dispatch: its scanner only matches named groups, lastgroup is set
        method = self._methods[m.lastgroup]  # type: ignore[index]  # lastgroup: str | None
        if state.parent is not None:
            return method(m, state)
        before = len(state.tokens)
        last = state.tokens[-1] if state.tokens else None
        last_type = last["type"] if last else None
        last_end = last.get("_end") if last else None
        end = method(m, state)
        if not end:
            return end
        new = state.tokens[before:]
        if len(new) == 1:  # the usual case: one token from the match to `end`
            if "_start" not in new[0]:
                new[0]["_start"], new[0]["_end"] = m.start(), end
        elif new:
            for index, token in enumerate(new):
                if "_start" in token:
                    continue
                token["_start"] = m.start() if index == 0 else new[index - 1]["_end"]
                following = new[index + 1] if index + 1 < len(new) else None
                token["_end"] = following["_start"] if following and "_start" in following else end
        elif last is not None and state.tokens[-1] is last and last["type"] != last_type:
            last["_end"] = end  # a setext underline turned the paragraph into a heading
        elif last is None or last.get("_end") == last_end:
            # consumed without a token (link reference definitions): keep the text
            state.append_token({"type": "unparsed", "_start": m.start(), "_end": end})
        return end

    def _parse_indent_code_fast(self, state: BlockState) -> int | None:  # mistune >= 3.1 fast path
        if state.src[state.cursor : state.cursor + 1] not in (" ", "\t"):
            return None  # indented code starts with a space or a tab: skip the line copy
        before, start = len(state.tokens), state.cursor
        end = super()._parse_indent_code_fast(state)
        if end is not None and state.parent is None and len(state.tokens) > before:
            state.tokens[-1].update(_start=start, _end=end)
        return end


def _next_block(sc: re.Pattern[str], src: str, pos: int) -> re.Match[str] | None:
    """`sc.search(src, pos)` for a pattern whose every branch starts with `^` (multiline):
    the first line start from `pos` where it matches (a regex search tries every character)."""
    if pos > 0 and src[pos - 1] != "\n":
        pos = src.find("\n", pos) + 1
        if pos == 0:
            return None
    while True:
        m = sc.match(src, pos)
        if m is not None:
            return m
        pos = src.find("\n", pos) + 1
        if pos == 0:
            return None


def _paragraph_end(sc: re.Pattern[str], src: str, pos: int) -> int:
    """Where the plain paragraph whose first line starts at `pos` ends, walked as mistune's
    `_parse_plain_paragraph` walks it (the next line start where a rule matches or the line
    is blank), without its two method calls and a stripped copy per line."""
    end = len(src)
    pos = src.find("\n", pos) + 1 or end
    while pos < end:
        if sc.match(src, pos):
            break
        line_end = src.find("\n", pos) + 1 or end
        if src[pos:line_end].isspace():  # `not line.strip()` of a non-empty line
            break
        pos = line_end
    return pos


def _line_start_rules(parser: BlockParser) -> bool:
    """Whether every rule the parser may combine can only match at the start of a line."""
    names = {*parser.rules, *parser.list_rules, *parser.block_quote_rules}
    return all(re.match(r"\(*\^", parser.specification[name]) is not None for name in names)


def _make_markdown(fast: bool = True) -> mistune.Markdown:
    """Our parser; `fast=False` keeps mistune's own list parser and block search (tests)."""
    parser = _PositionedParser()
    parser.register("admonition", _ADMONITION_OPEN, _parse_admonition, before="fenced_code")
    # Inside lists and quotes only what chunk metadata reports is needed (code, nesting);
    # item and quote extents do not depend on these rules, and this halves list parsing.
    nested = ["fenced_code", "indent_code", "block_quote", "list", "blank_line"]
    parser.list_rules = list(nested)
    parser.block_quote_rules = list(nested)
    gfm_table.register(parser)
    if fast:  # its rules are final now: patterns can be made once
        parser.anchored = _line_start_rules(parser)
        if list_items.available:
            parser.list_patterns = list_items.ListPatterns(parser, children=_NESTED_TRIGGER)
    return mistune.Markdown(block=parser)


_MARKDOWN = _make_markdown()
_KIND = {
    "paragraph": "text",
    "heading": "heading",
    "block_code": "code",
    "thematic_break": "text",
    "block_quote": "quote",
    "list": "list",
    "block_html": "html",
    "table": "table",
    "admonition": "admonition",
    "unparsed": "text",
}


def scan_blocks(source: str, start: int = 0, end: int | None = None) -> list[Block]:
    """The top-level blocks of `source[start:end]`, in order, with exact offsets."""
    end = len(source) if end is None else end
    text = source[start:end]
    if not text.endswith("\n"):
        text += "\n"
    state = _PositionedState()
    state.process(text)
    _MARKDOWN.block.parse(state)
    blocks: list[Block] = []
    covered = 0
    for token in state.tokens:
        if token["type"] == "blank_line" or "_start" not in token:
            continue
        token_start = max(token["_start"], covered)
        token_end = _trim_end(text, token_start, min(token["_end"], end - start))
        if token_end <= token_start:
            continue
        _add_gap(blocks, text, covered, token_start, start)
        blocks.append(_block(token, text, token_start, token_end, start))
        covered = max(covered, token["_end"])
    _add_gap(blocks, text, covered, end - start, start)
    return blocks


def _trim_end(text: str, start: int, end: int) -> int:
    """Drop trailing blank lines and the final newline, keep spaces on the last line."""
    content = text[start:end].rstrip(" \t\n")
    if not content:
        return start
    line_end = text.find("\n", start + len(content), end)
    return end if line_end < 0 else line_end


def _add_gap(blocks: list[Block], text: str, start: int, end: int, offset: int) -> None:
    """Non-blank text no token claimed (should not happen) is kept as a text block."""
    if end <= start or not text[start:end].strip():
        return
    lead = len(text[start:end]) - len(text[start:end].lstrip("\n"))
    trimmed_end = _trim_end(text, start + lead, end)
    blocks.append(Block("text", offset + start + lead, offset + trimmed_end))


def _block(token: dict[str, Any], text: str, start: int, end: int, offset: int) -> Block:
    kind = _KIND.get(token["type"], "text")
    level, title = 0, ""
    if kind == "heading":
        level = token["attrs"]["level"]
        title = _heading_title(token.get("text", ""))
    if not token.get("children") and kind not in ("code", "admonition"):
        return Block(kind, offset + start, offset + end, level=level, title=title)  # nothing inside
    languages: list[str] = []
    admonitions: list[str] = []
    inner: list[str] = []
    _walk(token, languages, admonitions, inner, top=True)
    inner_kinds = tuple(dict.fromkeys(k for k in inner if k != kind))
    return Block(
        kind,
        offset + start,
        offset + end,
        level=level,
        title=title,
        languages=tuple(dict.fromkeys(languages)),
        admonitions=tuple(dict.fromkeys(admonitions)),
        inner_kinds=inner_kinds,
    )


def _heading_title(raw: str) -> str:
    """mistune already dropped the `#` marks and closing hashes; fold the whitespace."""
    return " ".join(raw.split())


def _walk(
    token: dict[str, Any], languages: list[str], admonitions: list[str], inner: list[str], top: bool
) -> None:
    kind = token["type"]
    if kind == "block_code":
        info = (token.get("attrs") or {}).get("info", "")
        if info.split():
            languages.append(info.split()[0].strip("{}.").lower())
    elif kind == "admonition":
        admonitions.append(token["name"])
    if not top and kind in ("block_code", "table", "list", "block_quote", "admonition"):
        inner.append(_KIND[kind])
    for child in token.get("children") or ():
        if isinstance(child, dict):
            _walk(child, languages, admonitions, inner, top=False)

"""GFM tables as GitHub renders them (GFM spec, "Tables (extension)"), as one mistune block rule.

mistune's own table plugin wants a pipe at both ends of every row (or none anywhere) and the
same number of cells in every row; anything else silently becomes a paragraph, which the
chunker then cut at sentence ends, inside rows. GitHub is laxer, and so is this rule:

- a header row and a delimiter row (cells of `-` with optional `:` at either end) with the
  same number of cells start a table, leading and trailing pipes optional on each row;
- the table may directly follow a paragraph line (the lines before stay a paragraph);
- body rows run until a blank line or a line that starts another block (quote, ATX heading,
  code fence, admonition fence, thematic break, list item); a short row is padded and a long
  one cut, so neither ends the table.

Only the table's extent matters to the chunker (it slices the source itself), so the token
carries no cells.
"""

from __future__ import annotations

import re

from mistune.block_parser import BlockParser
from mistune.core import BlockState

_DELIMITER_CELL = r"[ \t]*:?-+:?[ \t]*"
_DELIMITER_ROW = rf" {{0,3}}\|?{_DELIMITER_CELL}(?:\|{_DELIMITER_CELL})*\|?[ \t]*"
# The header line, when the line after it is a delimiter row (checked again in the parse).
PATTERN = rf"^(?P<gfm_table_head> {{0,3}}\S[^\n]*)\n(?={_DELIMITER_ROW}(?:\n|$))"
_DELIMITER = re.compile(_DELIMITER_ROW)
_ENDS_TABLE = re.compile(
    r" {0,3}(?:>|#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|:{3,}|(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)"
    r"|(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$)"
)


def cells(row: str) -> int:
    """How many cells a row has: unescaped pipes split it; one leading and trailing is optional."""
    text = row.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not _escaped(text, len(text) - 1):
        text = text[:-1]
    return 1 + sum(1 for i, c in enumerate(text) if c == "|" and not _escaped(text, i))


def _escaped(text: str, pos: int) -> bool:
    backslashes = 0
    while pos > 0 and text[pos - 1] == "\\":
        backslashes += 1
        pos -= 1
    return backslashes % 2 == 1


def parse_table(parser: BlockParser, m: re.Match[str], state: BlockState) -> int | None:
    """A table from the header line on, or None (the line is then an ordinary text line)."""
    head = m.group("gfm_table_head")
    delimiter_start = m.end()
    delimiter_end = state.find_line_end_at(delimiter_start)
    delimiter = state.src[delimiter_start:delimiter_end].rstrip("\n")
    if "|" not in head and "|" not in delimiter:
        return None  # `Title` over `---` is a setext heading
    if not _DELIMITER.fullmatch(delimiter) or cells(head) != cells(delimiter):
        return None
    pos = delimiter_end
    while pos < state.cursor_max:
        line_end = state.find_line_end_at(pos)
        line = state.src[pos:line_end]
        if not line.strip() or _ENDS_TABLE.match(line):
            break
        pos = line_end
    state.append_token({"type": "table", "children": []})
    return pos


def register(parser: BlockParser) -> None:
    """Add the rule to the top-level rules, before paragraphs (as mistune's plugin does)."""
    parser.register("gfm_table", PATTERN, parse_table, before="paragraph")

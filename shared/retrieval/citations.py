"""Where a hit points: a `[Title: Section](URL)` link, the URL as close to the passage as
the source allows (`#page=N` for a PDF page, the heading's anchor for a web page)."""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from shared.retrieval import anchor
from shared.urls import safe_url


@dataclass(frozen=True)
class Citation:
    title: str
    section: str | None
    headings: list[str]
    url: str | None
    page: int | None

    @property
    def markdown(self) -> str:
        label = f"{self.title}: {self.section}" if self.section else self.title
        if self.page is not None and not self.url:  # a PDF without a link still names its page
            label = f"{label}, p. {self.page}"
        return markdown_link(label, self.url)


# --- escaping: a citation is always exactly one link, whatever its title, heading and URL ---

#: What Markdown (or HTML inside it) could read as syntax within a label: emphasis, code,
#: brackets (which would end the label), tags, table pipes. Parentheses stay as they are:
#: with the brackets escaped they cannot start a link.
_LABEL_SYNTAX = re.compile(r"([\\`*_\[\]<>|~])")
#: ASCII a link destination keeps as is (RFC 3986's reserved and unreserved characters, and
#: `%` for escapes already made); `(`, `)`, `'`, `<`, `>`, quotes, spaces and controls are
#: percent-encoded, so nothing can close the destination or start HTML.
_URL_KEEP = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&*+,;=%")


def markdown_link(label: str, url: str | None) -> str:
    """`[label](url)` with every Markdown-special character of the label escaped (and line
    breaks made spaces) and the URL percent-encoded; `[label]` alone when the URL is not an
    http(s) URL."""
    text = _LABEL_SYNTAX.sub(r"\\\1", " ".join(label.split()))
    safe = safe_url(url)
    return f"[{text}]({link_url(safe)})" if safe else f"[{text}]"


def link_url(url: str) -> str:
    """`url` with what may not stand in a Markdown link destination percent-encoded;
    printable letters beyond ASCII (é, ë) stay, as browsers show them."""
    return "".join(
        ch
        if ch in _URL_KEEP or (ord(ch) > 127 and ch.isprintable() and not ch.isspace())
        else quote(ch, safe="")
        for ch in url
    )


def own_text_range(payload: dict[str, Any]) -> tuple[int, int] | None:
    """Where the chunk's own text lies in its `text` (the coordinates of `sections`)."""
    start, end = payload.get("char_start"), payload.get("char_end")
    if start is None or end is None:
        return None
    offset = int(payload.get("new_text_offset") or 0)
    return offset, offset + int(end) - int(start)


def cited_headings(payload: dict[str, Any]) -> list[str]:
    """The heading path of the section the hit's own text lies in: from the chunk's
    `sections` (a chunk may span several) when present, else its `headings`."""
    sections = payload.get("sections") or []
    span = own_text_range(payload)
    if sections and span:
        start, end = span

        def overlap(section: dict[str, Any]) -> int:
            lo = max(start, int(section.get("char_start", 0)))
            hi = min(end, int(section.get("char_end", 0)))
            return hi - lo

        best = max(sections, key=overlap)  # max keeps the first of equals
        if overlap(best) > 0 or len(sections) == 1:
            return list(best.get("headings") or [])
    return list(payload.get("headings") or [])


def slug(heading: str) -> str:
    """A heading's anchor as Markdown renderers make it (GitHub, Docusaurus):
    `Wat neemt u mee?` -> `wat-neemt-u-mee`."""
    text = unicodedata.normalize("NFC", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def citation(payload: dict[str, Any], passage: str = "") -> Citation:
    """The hit's citation: the section and page of `passage` (the sentence that matched,
    in the chunk's own text) when it can be placed, else of the chunk."""
    at = anchor.locate(anchor.own_text(payload), passage) if passage else None
    placed = anchor.section_at(payload, at) if at is not None else None
    headings = placed if placed is not None else cited_headings(payload)
    title = str(payload.get("title") or payload.get("external_id") or "document")
    section = headings[-1] if headings else None
    if section == title:  # an H1 repeating the title says nothing more
        section = " > ".join(headings[1:]) or None
    url = payload.get("source_url") or None
    page = anchor.page_at(payload, at) if at is not None else None
    page = page if page is not None else payload.get("page_start")
    if url:
        base = url.split("#", 1)[0]
        if page is not None:
            url = f"{base}#page={page}"
        elif headings:
            url = f"{base}#{slug(headings[-1])}"
    return Citation(title, section, headings, url, page)

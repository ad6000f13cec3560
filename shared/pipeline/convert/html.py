"""HTML pages (a crawler's output, a CMS body) to Markdown: the article, not the site around it.

trafilatura finds the main content (navigation, header, footer, scripts, cookie banners and
"related" boxes dropped) and writes it as Markdown with headings, lists and GFM tables, which
is what the chunker takes. Chosen over readability + markdownify / html-to-markdown because
one maintained library does both steps and keeps tables; on a short page where its boilerplate
rules find nothing, the whole body is taken (`favor_recall`) rather than nothing.
"""

from __future__ import annotations

import functools

from shared.errors import PermanentError

HTML_MEDIA_TYPE = "text/html"


def looks_like_html(text_head: str, filename: str | None = None) -> bool:
    """A document (not Markdown with a little inline HTML): it opens with a doctype or an
    `<html>` tag, or it is named .html/.htm and opens with a tag."""
    head = text_head.lstrip("\ufeff \t\r\n").lower()
    if head.startswith(("<!doctype html", "<html")):
        return True
    named = (filename or "").lower().endswith((".html", ".htm"))
    return named and head.startswith("<")


def convert_html(text: str) -> tuple[str, dict[str, object]]:
    """The page's main content as Markdown, and its metadata (`title`, `language` when the
    page names them). Raises `html_no_content` when there is no text to index."""
    import trafilatura  # imported here: `ingest --help` and the API start without it

    extract = functools.partial(
        trafilatura.extract,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_links=False,
        include_images=False,
        include_comments=False,
        deduplicate=False,
    )
    markdown = extract(text) or extract(text, favor_recall=True)
    if not markdown or not markdown.strip():
        raise PermanentError(
            "The HTML page holds no readable text (only navigation, scripts or images). "
            "Upload the page with its article text, or a PDF or Markdown version.",
            code="html_no_content",
        )
    metadata: dict[str, object] = {}
    found = trafilatura.extract_metadata(text)
    if found is not None and found.title:
        metadata["title"] = found.title.strip()
    return markdown.strip() + "\n", metadata

"""A bound on the text a PDF's pages yield, checked while pypdf reads them.

A page's content can draw one form XObject thousands of times, or repeat a text in a 1-point
font: a 68 KB file can give 70 million characters (73 s, 908 MB) that the chunker would then
work on for hours. pypdf reports every run of text to a visitor as it goes, so the
count is kept there and the page is given up at the first run over the bound (`too_large`),
before the lines, the layout or the Markdown of the rest are built.

`counting(page, bound)` hands `extract_lines` a stand-in for the page whose `extract_text`
puts the count in front of the caller's visitor; the layout code is left as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shared.errors import PermanentError

if TYPE_CHECKING:  # pypdf itself is loaded by `convert.pdf`, when a PDF is converted
    from pypdf import PageObject


class TextBound:
    """Characters of text per page and for the whole document, counted as pypdf reads."""

    def __init__(self, per_page: int, total: int) -> None:
        self.per_page = per_page
        self.total = total
        self.page = 0
        self.on_page = 0
        self.seen = 0
        self.refusal: PermanentError | None = None

    def start_page(self, number: int) -> None:
        self.page, self.on_page = number, 0

    def add(self, chars: int) -> None:
        """Count a run of text; over the bound, raise `too_large` (and keep it: pypdf swallows
        what a visitor raises inside a form XObject, `raise_refusal` raises it again)."""
        self.on_page += chars
        self.seen += chars
        if self.refusal is None and (self.on_page > self.per_page or self.seen > self.total):
            self.refusal = self._refusal()
        if self.refusal is not None:
            raise self.refusal

    def raise_refusal(self) -> None:
        """After a page: raise the refusal a visitor raised, should pypdf have swallowed it."""
        if self.refusal is not None:
            raise self.refusal

    def _refusal(self) -> PermanentError:
        if self.on_page > self.per_page:
            return PermanentError(
                f"Page {self.page} of this PDF holds more than {self.per_page:,} characters "
                "of text, far more than fits on a readable page: text drawn over and over or "
                "in a tiny font. Export it again from the original program (or print it to "
                "PDF) and upload the new copy.",
                code="too_large",
            )
        return PermanentError(
            f"This PDF holds more than {self.total:,} characters of text (reached on page "
            f"{self.page}). Split it into smaller documents and upload those.",
            code="too_large",
        )


class _CountingPage:
    """A page whose `extract_text` counts each run of text before the caller's visitor."""

    def __init__(self, page: PageObject, bound: TextBound) -> None:
        self._page = page
        self._bound = bound

    def extract_text(self, *args: Any, visitor_text: Any = None, **kwargs: Any) -> str:
        add = self._bound.add

        def visit(text: Any, *rest: Any) -> None:
            add(len(text) if text else 0)  # once refused, every further call raises again
            if visitor_text is not None:
                visitor_text(text, *rest)

        return self._page.extract_text(*args, visitor_text=visit, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._page, name)


def counting(page: PageObject, bound: TextBound, number: int) -> PageObject:
    """`page` (1-based `number`) with its text counted against `bound` as it is read."""
    bound.start_page(number)
    return _CountingPage(page, bound)  # type: ignore[return-value]  # duck-typed stand-in

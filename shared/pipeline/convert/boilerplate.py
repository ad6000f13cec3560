"""Text a brochure carries that is not about its subject: standard end blocks and codes.

Every folder of a hospital ends with the same blocks ("Wat vindt u van deze
patiënteninformatie?", the same note in five languages). Kept, they are a quarter of the
chunks of a short folder and crowd real answers out of the top results; within one document
nothing shows they repeat, so the headings that open them are configured
(`PDF_DROP_SECTIONS`). A bare long number in small print (a folder's order code,
"114501072025") goes too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from difflib import SequenceMatcher

from shared.pipeline.convert.lines import Line

_CODE = re.compile(r"^\d{8,14}$")
SMALL_PRINT = 0.9  # a size below this share of the body size is small print
OCR_MATCH = 0.9  # similarity at which a heading read by OCR opens a configured section
_NOT_DECOMPOSED = str.maketrans({"ı": "i", "ł": "l", "ø": "o", "đ": "d", "ß": "ss"})


def _key(text: str) -> str:
    """Case-folded, without spaces (pypdf spaces some letters apart: "Pa ń stwa") and
    without accents (OCR reads "Państwa znajomość" as "Panstwa znajomosc")."""
    folded = unicodedata.normalize("NFKD", text).casefold().translate(_NOT_DECOMPOSED)
    return "".join(ch for ch in "".join(folded.split()) if not unicodedata.combining(ch))


def _opens(heading: str, key: str) -> bool:
    """`heading` (a key) starts with `key`, allowing for a letter or two misread by OCR
    ("hiç" read "hig")."""
    if heading.startswith(key):
        return True
    start = heading[: len(key)]
    return len(start) == len(key) and SequenceMatcher(None, start, key).ratio() >= OCR_MATCH


def drop_sections(pages: list[list[Line]], openings: Sequence[str]) -> list[str]:
    """Delete, in place, each section whose heading starts with one of `openings` (compared
    without case and spaces): the heading and everything up to the next heading of the same
    or a higher level. Returns a warning per heading dropped."""
    keys = [_key(opening) for opening in openings if _key(opening)]
    if not keys:
        return []
    dropped: list[str] = []
    level = 0  # > 0: inside a dropped section of this level
    for lines in pages:
        keep = []
        for line in lines:
            if line.heading and level and line.heading <= level:
                level = 0
            if line.heading and not level and any(_opens(_key(line.text), k) for k in keys):
                level = line.heading
                dropped.append(line.text)
            if not level:
                keep.append(line)
        lines[:] = keep
    return [f"standard section left out: {text!r}" for text in dropped]


def remove_document_codes(pages: list[list[Line]], body: float) -> None:
    """Delete bare 8-14 digit numbers set in small print (a folder's order code)."""
    for lines in pages:
        lines[:] = [
            line
            for line in lines
            if not (_CODE.match(line.text) and body and line.size < SMALL_PRINT * body)
        ]

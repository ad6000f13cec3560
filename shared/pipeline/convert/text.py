"""Text helpers for conversion: decoding uploaded text, sniffing it, cleaning PDF text lines."""

from __future__ import annotations

import codecs
import re
import unicodedata

from shared.errors import PermanentError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF; nothing else changes."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode Markdown or plain text: UTF-8 (BOM dropped), or UTF-16 with a BOM.

    Returns the text with normalised line endings and the encoding used. Anything else is
    refused with `undecodable_text` and a message that tells the editor what to do.
    """
    encoding = "utf-16" if data.startswith(_UTF16_BOMS) else "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PermanentError(
            f"The file is not readable as UTF-8 text (invalid byte on line {line}). It was "
            "probably saved in an older encoding such as Windows-1252. Save it as UTF-8 and "
            "upload it again.",
            code="undecodable_text",
        ) from exc
    if "\x00" in text:
        raise PermanentError(
            "The file contains binary data (NUL characters), so it is not a text file. If it "
            "is UTF-16 text without a byte order mark, save it as UTF-8 and upload it again.",
            code="undecodable_text",
        )
    return normalise_newlines(text), "utf-16" if encoding == "utf-16" else "utf-8"


# Control bytes that never occur in text files (tab, LF, FF, CR and ESC are allowed).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27)) + b"\x7f"


def sniff_text(head: bytes) -> str | None:
    """Judge the first bytes of a file: "text", "legacy_text" (not UTF-8, but clearly text in
    an 8-bit encoding, so conversion can explain the fix), or None (binary)."""
    if head.startswith((codecs.BOM_UTF8, *_UTF16_BOMS)):
        return "text"
    if not head or b"\x00" in head:
        return None if head else "text"
    control = sum(head.count(bytes([b])) for b in _CONTROL_BYTES)
    if control > len(head) // 200:
        return None
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(head, final=False)  # a character cut off at the end is fine
        return "text"
    except UnicodeDecodeError:
        high = sum(1 for b in head if b >= 0x80)
        return "legacy_text" if high <= len(head) // 4 else None


# ---------------------------------------------------------------------------------------
# PDF text lines
# ---------------------------------------------------------------------------------------

_LIGATURES = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
    }
)
# Spacing accents that some PDF producers draw as a glyph of their own after the letter.
_SPACING_ACCENTS = {
    "\u00b4": "\u0301",  # acute
    "\u00a8": "\u0308",  # diaeresis
    "\u02c6": "\u0302",  # circumflex
    "\u02dc": "\u0303",  # tilde
    "\u00b8": "\u0327",  # cedilla
    "\u02da": "\u030a",  # ring
    "\u02c7": "\u030c",  # caron
    "\u02d8": "\u0306",  # breve
    "\u00af": "\u0304",  # macron
    "\u02dd": "\u030b",  # double acute
    "\u02db": "\u0328",  # ogonek
    "\u02d9": "\u0307",  # dot above
}
_LETTER_THEN_ACCENT = re.compile(r"([^\W\d_])([" + "".join(_SPACING_ACCENTS) + "])")
# Glyphs word processors use for bullets, including the Symbol/Wingdings private-use range and
# the code WinAnsiEncoding maps every unused slot to (pypdf reports it as U+007F / U+0095).
BULLET_GLYPHS = frozenset(
    "•·◦▪▫■□●○‣⁃∙➢➤►▶✓✔❖◆◇\x7f\x95" + "".join(chr(c) for c in range(0xF000, 0xF100))
)
_ODD_SPACES = re.compile(r"[\u00a0\u2000-\u200a\u202f\u205f\u3000\t]+")
_INVISIBLE = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u200b\u2060\ufeff]")
_MULTI_SPACE = re.compile(r" {2,}")


def _compose_accent(match: re.Match[str]) -> str:
    letter, accent = match.group(1), match.group(2)
    composed = unicodedata.normalize("NFC", letter + _SPACING_ACCENTS[accent])
    return composed if len(composed) == 1 else match.group(0)


def clean_pdf_line(text: str) -> str:
    """One line of PDF text as a reader would type it: ligatures expanded, split accents and
    combining marks composed (NFC), odd spaces and invisible characters dropped, a leading
    bullet glyph of any kind turned into "•"."""
    text = _ODD_SPACES.sub(" ", text.translate(_LIGATURES)).strip()
    if text and text[0] in BULLET_GLYPHS:
        text = "• " + text[1:].lstrip(" " + "".join(BULLET_GLYPHS))
    soft_hyphen_at_end = text.endswith("\u00ad")
    text = _INVISIBLE.sub("", text)
    text = unicodedata.normalize("NFC", _LETTER_THEN_ACCENT.sub(_compose_accent, text))
    text = _MULTI_SPACE.sub(" ", text).strip()
    if soft_hyphen_at_end and text:
        text += "-"  # a soft hyphen at the end of a line is a hyphenated word break
    return text

"""Word documents (.docx) to Markdown, with their headings, lists and tables.

mammoth reads the document's styles (Heading 1, 2, ... -> h1, h2; list paragraphs -> lists;
tables -> tables) into clean HTML, and markdownify writes that as Markdown with ATX headings
and GFM tables. mammoth is chosen over python-docx because it maps styles and numbering to
structure (python-docx gives paragraphs and runs; lists would be rebuilt by hand); images are
left out (mammoth would inline them as base64). Before mammoth reads anything the ZIP is
checked: encrypted files, macro-enabled files and archives that unpack far beyond their size
are refused with typed errors.
"""

from __future__ import annotations

import io
import re
import zipfile

from shared.errors import PermanentError

DOCX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# An encrypted Office file is a CFB container with these streams (MS-OFFCRYPTO).
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")


def is_encrypted_office(data: bytes) -> bool:
    """A password-protected Word/Excel/PowerPoint file (OOXML inside an encrypted container)."""
    return data.startswith(_CFB_MAGIC) and _ENCRYPTED_STREAM in data[: 1024 * 1024]


def is_docx(data: bytes) -> bool:
    """A ZIP whose parts include `word/document.xml` (macro-enabled .docm included: refused
    later with its own message)."""
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def _check_archive(data: bytes, max_unpacked: int) -> None:
    if is_encrypted_office(data):
        raise PermanentError(
            "The Word document is protected with a password. Save it without a password "
            "and upload it again.",
            code="office_encrypted",
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise _corrupt() from exc
    with archive:
        names = set(archive.namelist())
        if "word/document.xml" not in names:
            raise _corrupt()
        content_types = (
            archive.read("[Content_Types].xml") if "[Content_Types].xml" in names else b""
        )
        if (
            any(n.lower().endswith("vbaproject.bin") for n in names)
            or b"macroEnabled" in content_types
        ):
            raise PermanentError(
                "The Word document contains macros (.docm). Save it as a normal Word document "
                "(.docx) without macros and upload it again.",
                code="office_macros",
            )
        # Images are never read; the XML mammoth parses is what could unpack without bound.
        unpacked = sum(
            i.file_size for i in archive.infolist() if not i.filename.startswith("word/media/")
        )
        if unpacked > max_unpacked:
            raise PermanentError(
                f"The Word document unpacks to {unpacked // (1024 * 1024)} MB of text and "
                f"layout, more than the limit of {max_unpacked // (1024 * 1024)} MB "
                "(OFFICE_MAX_UNPACKED_BYTES). Split it into smaller documents.",
                code="too_large",
            )


def _corrupt() -> PermanentError:
    return PermanentError(
        "The Word document is damaged and cannot be read. Open it in Word, save it again as "
        ".docx and upload it again.",
        code="docx_corrupt",
    )


def convert_docx(data: bytes, max_unpacked: int) -> tuple[str, dict[str, object], list[str]]:
    """Markdown, metadata (`title` from the document's properties) and warnings (mammoth's
    messages about styles it did not know, shown to the editor)."""
    import mammoth  # imported here: `ingest --help` and the API start without it
    from markdownify import markdownify

    _check_archive(data, max_unpacked)
    no_images = mammoth.images.img_element(lambda image: {})
    try:
        result = mammoth.convert_to_html(io.BytesIO(data), convert_image=no_images)
    except Exception as exc:  # mammoth raises KeyError, XML errors, ... on a broken file
        raise _corrupt() from exc
    # Word marks no header row (mammoth writes every row as `td`): the first row is the
    # header, as the reader sees it, not an empty one above it.
    markdown = markdownify(
        result.value,
        heading_style="ATX",
        bullets="-",
        strip=["img", "a"],
        escape_misc=False,
        table_infer_header=True,
    )
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip() + "\n"
    metadata: dict[str, object] = {}
    title = _core_title(data)
    if title:
        metadata["title"] = title
    warnings = sorted({m.message for m in result.messages if m.type == "warning"})[:10]
    return markdown, metadata, warnings


def _core_title(data: bytes) -> str | None:
    """The title in the document's properties (File > Properties), if any."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if "docProps/core.xml" not in archive.namelist():
            return None
        core = archive.read("docProps/core.xml")[:65536].decode("utf-8", "replace")
    found = re.search(r"<dc:title>([^<]{1,500})</dc:title>", core)
    return found.group(1).strip() or None if found else None

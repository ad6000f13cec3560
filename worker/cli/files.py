"""Finding the documents under the paths given on the command line, and naming them.

The identity rule (README, "Command line"), `shared.documents.file_external_id`: a file's
document is keyed by `source` and an external id. The external id is the file's absolute
path, so the same file is the same document whatever the working directory and however it was
named (`ingest run knieoperatie.md` from its folder, `ingest run folder/` from the parent).
With `--id-prefix P` it is `P` plus the path relative to the folder given (a file given by
itself: its name), which stays the same when the folder moves to another place or machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SUFFIXES = {".md", ".markdown", ".txt", ".pdf", ".docx", ".html", ".htm"}


@dataclass(frozen=True)
class Found:
    path: Path
    external_id: str


@dataclass
class Listing:
    """The files to ingest, and those under the folders left out for their type."""

    files: list[Found] = field(default_factory=list)
    unsupported: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)


def is_hidden(path: Path, base: Path) -> bool:
    """A dot-file, or a file inside a dot-folder, below `base` (`.venv/`, `.git/`, `.draft.md`):
    left out of a folder's listing, as `ls` and editors' file pickers do."""
    return any(part.startswith(".") for part in path.relative_to(base).parts)


def document_files(
    paths: Iterable[Path], id_prefix: str | None = None, include_hidden: bool = False
) -> Listing:
    """Files named directly, and every Markdown, text or PDF file under the folders, sorted;
    other files under the folders are listed as unsupported, hidden ones (unless
    `include_hidden`) as hidden. A file found twice counts once; a file named directly is taken
    even when hidden (the user asked for it)."""
    from shared.documents import file_external_id  # `ingest --help` imports no `shared`

    listing = Listing()
    seen: set[Path] = set()

    def add(path: Path, base: Path | None) -> None:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            listing.files.append(Found(path, file_external_id(path, base, id_prefix)))

    for path in paths:
        if path.is_dir():
            for found in sorted(p for p in path.rglob("*") if p.is_file()):
                if not include_hidden and is_hidden(found, path):
                    listing.hidden.append(found)
                elif found.suffix.lower() in SUFFIXES:
                    add(found, path)
                else:
                    listing.unsupported.append(found)
        elif path.is_file():
            add(path, None)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return listing


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 chunk`, `2 chunks`, `0 documents`."""
    return f"{count} {word if count == 1 else (many or word + 's')}"

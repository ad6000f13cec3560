"""Finding the documents under the paths given on the command line."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SUFFIXES = {".md", ".markdown", ".txt", ".pdf"}


def document_files(paths: Iterable[Path]) -> list[Path]:
    """Files named directly, and every Markdown, text or PDF file under the folders, sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
            )
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return found

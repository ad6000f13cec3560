"""`ingest convert FILE [--json]`: show the Markdown a file converts to."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer


def convert(
    path: Annotated[Path, typer.Argument(metavar="FILE", help="A Markdown, text or PDF file.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print markdown, page map, metadata and warnings.")
    ] = False,
) -> None:
    """Print the Markdown that FILE converts to (with --json: page map and warnings too)."""
    from shared.errors import PermanentError
    from shared.pipeline.convert import convert as convert_bytes
    from shared.pipeline.convert import detect_media_type

    if path.is_dir():
        _fail(f"{path} is a folder: give one file (`ingest chunk` takes folders)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        _fail(f"{path}: no such file")
    except OSError as exc:
        _fail(f"{path}: cannot read the file ({exc.strerror or exc})")
    if not data:
        _fail(f"{path} is empty: nothing to convert")
    try:
        converted = convert_bytes(data, detect_media_type(data, path.name), path.name)
    except PermanentError as error:
        typer.echo(f"error [{error.code}]: {error.message}", err=True)
        raise typer.Exit(code=1) from None
    if as_json:
        payload = {
            "markdown": converted.markdown,
            "page_starts": [list(pair) for pair in converted.page_starts],
            "metadata": converted.metadata,
            "warnings": converted.warnings,
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    sys.stdout.write(converted.markdown.rstrip("\n") + "\n")
    for warning in converted.warnings:
        typer.echo(f"warning: {warning}", err=True)


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)

"""`ingest convert FILE [--json]`: show the Markdown a file converts to."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from shared.errors import PermanentError
from shared.pipeline.convert import convert as convert_bytes
from shared.pipeline.convert import detect_media_type


def convert(
    path: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, readable=True, metavar="FILE")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print markdown, page map, metadata and warnings.")
    ] = False,
) -> None:
    """Print the Markdown that FILE converts to (with --json: page map and warnings too)."""
    data = path.read_bytes()
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

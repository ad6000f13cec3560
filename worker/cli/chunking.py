"""`ingest chunk PATH... [--json]`: show how files are cut into chunks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from worker.cli.files import document_files, plural

if TYPE_CHECKING:
    from rich.table import Table

    from shared.pipeline.chunk import Chunk


def chunk(
    paths: Annotated[list[Path], typer.Argument(help="Markdown, text or PDF files, or folders.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per chunk per line.")
    ] = False,
) -> None:
    """Print the chunks of Markdown or PDF files (and folders of them)."""
    from shared.errors import IngestError
    from shared.pipeline.chunk import ChunkSettings, chunk_markdown
    from shared.pipeline.convert import convert, detect_media_type
    from shared.settings import get_settings

    settings = ChunkSettings.from_settings(get_settings())
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    failed = False
    for path in _files(paths):
        try:
            data = path.read_bytes()
            converted = convert(data, detect_media_type(data, path.name), path.name)
        except IngestError as exc:
            failed = True
            err.print(f"{path}: {exc.message}", markup=False)
            continue
        except OSError as exc:
            failed = True
            err.print(f"{path}: cannot read the file ({exc.strerror or exc}).", markup=False)
            continue
        chunks = chunk_markdown(converted.markdown, settings)
        if as_json:
            for item in chunks:
                record = {"file": str(path), **item.to_dict()}
                record["pages"] = converted.pages_for(item.char_start, item.char_end)
                record["metadata"] = {**converted.metadata, **item.metadata}
                typer.echo(json.dumps(record, ensure_ascii=False))
        else:
            out.print(_table(path, chunks))
    if failed:
        raise typer.Exit(code=1)


def _files(paths: list[Path]) -> Iterator[Path]:
    """The files named, and the Markdown, text and PDF files under the folders named."""
    for path in paths:
        if path.is_dir():
            yield from (found.path for found in document_files([path]).files)
        else:
            yield path  # a missing file is reported by read_bytes


def _table(path: Path, chunks: list[Chunk]) -> Table:
    from rich.table import Table

    table = Table(title=f"{path} ({plural(len(chunks), 'chunk')})", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("headings")
    table.add_column("first line")
    for item in chunks:
        first = item.new_text.strip().split("\n", 1)[0]
        table.add_row(
            str(item.index),
            str(item.token_count),
            " > ".join(item.headings),
            first[:80],
        )
    return table

"""The `ingest` command line: one entry point for operators and the embedded default."""

from __future__ import annotations

import traceback

import typer
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError

from shared.db import schema_missing
from shared.secrets import mask
from worker.cli import api_server, chunking, conversion, database, pipeline_cmds, retrieval_cmds

app = typer.Typer(
    help="Hospital content ingestion: convert, chunk, embed and index documents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("chunk")(chunking.chunk)
app.command("convert")(conversion.convert)
app.add_typer(database.db_app, name="db")
app.command("run")(pipeline_cmds.run)
app.command("status")(pipeline_cmds.status)
app.command("search")(retrieval_cmds.search)
app.command("eval")(retrieval_cmds.evaluate)
app.command("verify")(pipeline_cmds.verify)
app.command("delete")(pipeline_cmds.delete)
app.command("reindex")(pipeline_cmds.reindex)
app.command("api")(api_server.serve)


def main() -> None:
    """Console entry point: typed errors print as one line an operator can act on."""
    from shared.errors import IngestError

    try:
        app(standalone_mode=True)
    except IngestError as error:
        typer.echo(f"error [{error.code}]: {error.message}", err=True)
        raise SystemExit(1) from None
    except ValidationError as error:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc']))} {e['msg']}" for e in error.errors())
        typer.echo(f"error [configuration]: {_masked(reasons)}", err=True)
        raise SystemExit(2) from None
    except DBAPIError as error:
        if schema_missing(error):
            typer.echo(
                "error [no_schema]: the database has no schema: run `ingest db upgrade`.", err=True
            )
            raise SystemExit(1) from None
        _print_masked_traceback()
    except Exception:
        _print_masked_traceback()


def _masked(text: str) -> str:
    """`text` without passwords or keys (the settings may be what failed: then the
    environment names them)."""
    from shared.settings import get_settings

    try:
        settings = get_settings()
    except Exception:
        settings = None
    return mask(text, settings)


def _print_masked_traceback() -> None:
    """An unforeseen error: its traceback for the operator, with secrets masked (a database
    driver or a URL parser may put the URL in its message)."""
    typer.echo(_masked(traceback.format_exc()).rstrip(), err=True)
    raise SystemExit(1) from None

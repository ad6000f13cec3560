"""The `ingest` command line: one entry point for operators and the embedded default.

Start-up rule: a command pays only for what it uses (`ingest --help` imports no part of the
service; `ingest status` only the settings, SQLAlchemy and the models), so the command modules
import only typer, rich's console and the standard library at the top, and every command imports
the service (SQLAlchemy, Celery, Qdrant, tiktoken, ...) inside its own body.
A new command follows the same pattern; `tests/integration/test_cli_first_hour.py`
(`test_help_and_status_import_only_what_they_use`) checks it.
"""

from __future__ import annotations

import typer

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
    """Console entry point: every error prints as one line an operator can act on, never a
    traceback (set LOG_LEVEL=DEBUG to see one)."""
    try:
        app(standalone_mode=True)
    except Exception as error:
        typer.echo(one_line(error), err=True)
        if _debugging():
            raise
        raise SystemExit(1) from None


def one_line(error: Exception) -> str:
    """The message for an error that reached the top of a command."""
    from sqlalchemy.exc import DBAPIError

    from shared.db import schema_missing
    from shared.errors import IngestError

    if isinstance(error, IngestError):
        return f"error [{error.code}]: {error.message}"
    if isinstance(error, DBAPIError) and schema_missing(error):
        return "error [no_schema]: the database has no schema: run `ingest db upgrade`."
    if isinstance(error, DBAPIError):
        return f"error [database]: {type(error.orig).__name__}: {' '.join(str(error.orig).split())}"
    if isinstance(error, OSError):
        return f"error [os]: {error.strerror or error}" + (
            f": {error.filename}" if error.filename else ""
        )
    return f"error [internal_error]: {type(error).__name__}: {error}"


def _debugging() -> bool:
    from shared.settings import get_settings

    try:
        return get_settings().log_level.upper() == "DEBUG"
    except Exception:
        return False


if __name__ == "__main__":
    main()

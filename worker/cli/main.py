"""The `ingest` command line: one entry point for operators and the embedded default.

Start-up rule: a command pays only for what it uses (`ingest --help` imports no part of the
service; `ingest status` only the settings and the database driver), so the command modules
import only typer, rich's console and the standard library at the top, and every command imports
the service (SQLAlchemy, Celery, Qdrant, tiktoken, ...) inside its own body.
A new command follows the same pattern; `tests/integration/test_cli_first_hour.py`
(`test_help_and_status_import_only_what_they_use`) checks it.
"""

from __future__ import annotations

import traceback

import typer

from worker.cli import (
    api_server,
    chunking,
    conversion,
    database,
    pipeline_cmds,
    retrieval_cmds,
    verify_cmd,
)
from worker.cli.output import quick_exit_requested

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
app.command("verify")(verify_cmd.verify)
app.command("delete")(pipeline_cmds.delete)
app.command("reindex")(pipeline_cmds.reindex)
app.command("api")(api_server.api)
app.command("serve")(api_server.serve)


def main() -> None:
    """Console entry point: every error prints as one line an operator can act on, never a
    traceback (set LOG_LEVEL=DEBUG to see one)."""
    try:
        app(standalone_mode=True)
    except SystemExit as done:
        if quick_exit_requested():
            _end_now(done.code)
        raise
    except Exception as error:
        if _debugging():
            _print_masked_traceback()
        typer.echo(one_line(error), err=True)
        raise SystemExit(_exit_code(error)) from None


def _end_now(code: object) -> None:
    """End the process without the interpreter's teardown (`output.exit_quickly`): the
    database closed first (SQLite folds its write-ahead log back in), then the exit handlers
    (local Qdrant flushes and unlocks its folder; logging flushes), then the streams."""
    import atexit
    import os
    import sys

    database = sys.modules.get("shared.db")
    if database is not None:
        database.engine().dispose()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


def _exit_code(error: Exception) -> int:
    """2 for a configuration error (the settings), 1 for everything else."""
    from pydantic import ValidationError

    return 2 if isinstance(error, ValidationError) else 1


def one_line(error: Exception) -> str:
    """The message for an error that reached the top of a command, secrets masked (a database
    driver or a URL parser may put the URL, password included, in its message)."""
    return _masked(_describe(error))


def _describe(error: Exception) -> str:
    from pydantic import ValidationError
    from sqlalchemy.exc import DBAPIError

    from shared.db import schema_missing
    from shared.errors import IngestError

    if isinstance(error, IngestError):
        return f"error [{error.code}]: {error.message}"
    if isinstance(error, ValidationError):
        reasons = "; ".join(f"{'.'.join(map(str, e['loc']))} {e['msg']}" for e in error.errors())
        return f"error [configuration]: {reasons}"
    if isinstance(error, DBAPIError) and schema_missing(error):
        return "error [no_schema]: the database has no schema: run `ingest db upgrade`."
    if isinstance(error, DBAPIError):
        return f"error [database]: {type(error.orig).__name__}: {' '.join(str(error.orig).split())}"
    if isinstance(error, OSError):
        return f"error [os]: {error.strerror or error}" + (
            f": {error.filename}" if error.filename else ""
        )
    return f"error [internal_error]: {type(error).__name__}: {error}"


def _masked(text: str) -> str:
    """`text` without passwords or keys (the settings may be what failed: then the
    environment names them)."""
    from shared.secrets import mask
    from shared.settings import get_settings

    try:
        settings = get_settings()
    except Exception:
        settings = None
    return mask(text, settings)


def _debugging() -> bool:
    from shared.settings import get_settings

    try:
        return get_settings().log_level.upper() == "DEBUG"
    except Exception:
        return False


def _print_masked_traceback() -> None:
    """With LOG_LEVEL=DEBUG: the traceback for the operator, secrets masked."""
    typer.echo(_masked(traceback.format_exc()).rstrip(), err=True)


if __name__ == "__main__":
    main()

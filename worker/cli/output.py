"""The CLI's two consoles: results on stdout, progress, notices and errors on stderr.

Rich's Console is cheap to import next to typer (which imports rich for its help screens)."""

from __future__ import annotations

from rich.console import Console

console = Console()
errors = Console(stderr=True)


_quick = {"exit": False}


def exit_quickly() -> None:
    """Have the entry point end this command without tearing the interpreter down.

    After `ingest run` the interpreter would free every module and object it loaded (the
    OpenAI and Qdrant clients' thousands of model classes): most of a second of CPU that
    nobody waits for. `worker.cli.main.main` closes what must be closed (the database, then
    the exit handlers: local Qdrant's flush, the log files) and ends the process at once.
    Only the console entry point does this; a command invoked in-process (tests) is not
    affected."""
    _quick["exit"] = True


def quick_exit_requested() -> bool:
    return _quick["exit"]

"""The CLI's two consoles: results on stdout, progress, notices and errors on stderr.

Rich's Console is cheap to import next to typer (which imports rich for its help screens)."""

from __future__ import annotations

from rich.console import Console

console = Console()
errors = Console(stderr=True)

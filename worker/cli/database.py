"""`ingest db upgrade|downgrade`: run the schema migrations against DATABASE_URL."""

from __future__ import annotations

import typer

db_app = typer.Typer(help="Database schema migrations (Alembic).", no_args_is_help=True)


@db_app.command("upgrade")
def upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Create or update the schema (safe to run on every deploy)."""
    from shared import migrate

    migrate.upgrade(revision=revision)
    typer.echo(f"database upgraded to {revision}")


@db_app.command("downgrade")
def downgrade(revision: str = typer.Argument(..., help="Target revision, e.g. base.")) -> None:
    """Undo migrations down to REVISION (destroys data when going to base)."""
    from shared import migrate

    migrate.downgrade(revision=revision)
    typer.echo(f"database downgraded to {revision}")

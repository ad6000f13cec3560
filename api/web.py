"""The content team's web page: static HTML, CSS and vanilla JavaScript served at `/`.

The page itself holds no secret and needs no key; every call it makes to `/v1` carries the
API key the editor typed in (kept in the browser's sessionStorage only). The upload limit is
written into the page so that a file over it is refused before its bytes are sent.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent / "static"
LIMIT_PLACEHOLDER = "{{MAX_UPLOAD_BYTES}}"

#: Only our own scripts, styles and API: injected markup could not load or send anything.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@lru_cache(maxsize=1)
def _template() -> str:
    return (STATIC_DIR / "index.html").read_text(encoding="utf-8")


def render_index(max_upload_bytes: int) -> str:
    """The page with the upload limit filled in."""
    return _template().replace(LIMIT_PLACEHOLDER, str(int(max_upload_bytes)))


def install(app: FastAPI, max_upload_bytes: int) -> None:
    """Serve the page at `/` and its files under `/static` (left out of the OpenAPI document)."""
    page = render_index(max_upload_bytes)

    @app.get("/", include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(page, headers=SECURITY_HEADERS)

    app.mount("/static", PageAssets(directory=STATIC_DIR), name="static")


class PageAssets(StaticFiles):
    """The page's scripts and styles. The page itself is served only at `/`, with its
    security headers: a copy at `/static/index.html` could be framed or run without them."""

    def lookup_path(self, path: str) -> tuple[str, os.stat_result | None]:
        if path.lower().endswith((".html", ".htm")):
            return "", None
        return super().lookup_path(path)

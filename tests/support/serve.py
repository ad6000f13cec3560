"""`ingest serve` as a user starts it: the real console entry point in a subprocess, talked to
over HTTP on a free loopback port, stopped with SIGTERM."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.paths import ROOT
from tests.support.private_services import free_port
from tests.support.workers import wait_for

KEY = "serve-key-0123456789"
START_SECONDS = 120.0


class Served:
    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process = process
        self.log = log
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=30,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def upload(self, name: str, data: bytes) -> dict[str, Any]:
        """POST one file; the 202's one document."""
        files = [("file", (name, io.BytesIO(data), "application/octet-stream"))]
        response = self.http.post("/v1/documents", files=files)
        assert response.status_code == 202, response.text
        document: dict[str, Any] = response.json()["documents"][0]
        return document

    def status_of(self, document_id: str) -> str:
        status: str = self.http.get(f"/v1/documents/{document_id}").json()["status"]
        return status

    def wait_indexed(self, *document_ids: str, timeout: float = 120.0) -> None:
        for document_id in document_ids:
            wait_for(
                lambda d=document_id: self.status_of(d) == "indexed",  # type: ignore[misc]
                timeout=timeout,
                interval=0.2,
                what=f"document {document_id} to be indexed",
            )

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM, then the exit code."""
        self.http.close()
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)


@contextmanager
def served(env: dict[str, str], log_dir: Path) -> Iterator[Served]:
    """`ingest serve` with `env` on top of ours (and an API key); killed if a test left it."""
    port = free_port()
    log = log_dir / f"serve-{port}.log"
    full = {
        **os.environ,
        **env,
        "API_KEYS": f"editors:{KEY}",
        "PYTHONPATH": str(ROOT),
        "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", ""),
    }
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "worker.cli.main", "serve", "--port", str(port)],
            cwd=log_dir,
            env=full,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    server = Served(process, port, log)
    try:
        wait_for(
            lambda: process.poll() is not None or _answers(server),
            timeout=START_SECONDS,
            what="ingest serve to answer",
        )
        assert process.poll() is None, f"ingest serve exited at start:\n{server.output()[-3000:]}"
        yield server
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        server.http.close()


def _answers(server: Served) -> bool:
    try:
        return server.http.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False

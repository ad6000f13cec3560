"""Real Celery workers for tests: subprocesses against the real Redis and Postgres.

Local Qdrant locks its folder to one process, so a test runs one worker process at a time
for the `io` queue (thread pool inside), and opens the folder itself only after stopping it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from tests.support.paths import ROOT
from tests.support.private_services import (
    free_port as free_port,  # for the tests that import it here
)

T = TypeVar("T")
WORKER_START_SECONDS = 180


def wait_for(
    condition: Callable[[], T], *, timeout: float = 60.0, interval: float = 0.1, what: str = ""
) -> T:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        time.sleep(interval)


def spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start `command` from the project root with exactly `env`, its output going to `log`."""
    with open(log, "wb") as sink:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)


class WorkerProcess:
    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, unacked messages stay unacked (a crashed machine)."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def celery_worker(
    env: dict[str, str],
    log_dir: Path,
    *,
    queues: str = "cpu,io",
    concurrency: int = 2,
    pool: str = "threads",
) -> Iterator[WorkerProcess]:
    """Start `celery -A worker.app worker` with `env` on top of ours; stop it afterwards."""
    name = f"test-{uuid.uuid4().hex[:8]}@%h"
    log = log_dir / f"worker-{uuid.uuid4().hex[:8]}.log"
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        "worker",
        "-Q",
        queues,
        "-c",
        str(concurrency),
        "-P",
        pool,
        "-n",
        name,
        "--without-gossip",
        "--without-mingle",
        "-l",
        "INFO",
    ]
    process = spawn(command, {**os.environ, **env}, log)
    worker = WorkerProcess(process, log)
    try:
        wait_for(  # imports take seconds; over 60 s on a loaded shared machine (load 12)
            lambda: "ready." in worker.output() or process.poll() is not None,
            timeout=WORKER_START_SECONDS,
            what="the worker to start",
        )
        if process.poll() is not None:
            raise AssertionError(f"worker exited at start:\n{worker.output()[-3000:]}")
        yield worker
    finally:
        worker.stop()

"""Unsafe worker set-ups are refused at start: local Qdrant is locked to one
process, so an `io` worker with several prefork processes would fail its versions with
`qdrant_locked`."""

from __future__ import annotations

import os
import subprocess
import sys

from shared.settings import Settings
from tests.support.paths import ROOT
from worker.app import unsafe_setup


def test_an_io_worker_with_two_prefork_processes_on_local_qdrant_refuses_to_start(
    redis_url: str, tmp_path
) -> None:
    env = {**os.environ, "REDIS_URL": redis_url, "QDRANT_PATH": str(tmp_path / "qdrant")}
    env.pop("QDRANT_URL", None)
    command = [sys.executable, "-m", "celery", "-A", "worker.app", "worker", "-Q", "cpu,io"]
    done = subprocess.run(
        [*command, "-P", "prefork", "-c", "2", "--without-gossip", "--without-mingle"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    refusal = [line for line in done.stderr.splitlines() if "refusing to start" in line]
    assert len(refusal) == 1 and "-P threads" in refusal[0] and "QDRANT_URL" in refusal[0]
    assert "Traceback" not in done.stderr


def test_which_set_ups_are_safe() -> None:
    local = Settings(qdrant_path="/data/qdrant", _env_file=None)  # type: ignore[call-arg]
    server = Settings(qdrant_url="http://qdrant:6333", _env_file=None)  # type: ignore[call-arg]
    assert unsafe_setup(local, {"cpu", "io"}, "prefork", 2)
    assert unsafe_setup(local, {"io"}, "processes", "auto")
    assert not unsafe_setup(local, {"io"}, "threads", 8)
    assert not unsafe_setup(local, {"io"}, "prefork", 1)
    assert not unsafe_setup(local, {"cpu"}, "prefork", 4)  # convert and chunk never open Qdrant
    assert not unsafe_setup(server, {"cpu", "io"}, "prefork", 4)

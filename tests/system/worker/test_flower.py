"""Flower, the operators' monitor, against the real Redis: a document goes through a real worker
and Flower's own HTTP API shows the chain's five tasks `SUCCESS` with the version id as their
argument, and its Prometheus endpoint counts the events. The worker's JSON log has the line of
the finished ingest with its ids."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from ast import literal_eval
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from shared.states import Status
from tests.support.pipeline import PipelineEnv
from tests.support.workers import free_port, spawn, wait_for

CHAIN = ["ingest.convert", "ingest.chunk", "ingest.embed", "ingest.upsert", "ingest.finalize"]
ONLINE = re.compile(r'^flower_worker_online\{worker="([^"]+)"\} 1\.0$', re.MULTILINE)

PAGE = """# Knee surgery

## Preparation

Bring your identity card and the list of medicines you take. Do not eat after midnight.

## Recovery

Walk with crutches for two weeks. The physiotherapist shows you the exercises.
"""


@contextmanager
def flower(env: dict[str, str], log_dir: Path, login: str | None = None) -> Iterator[httpx.Client]:
    """`celery -A worker.app flower` on a free port: behind `login` (user:password) as in
    production, or else with its API opened for the test only."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        f"--broker={env['REDIS_URL']}",
        "flower",
        f"--port={port}",
        "--address=127.0.0.1",
    ]
    log = log_dir / "flower.log"
    access = {"FLOWER_BASIC_AUTH": login} if login else {"FLOWER_UNAUTHENTICATED_API": "true"}
    os_env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWER_")}
    process = spawn(command, {**os_env, **env, **access}, log)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5)

    def healthy() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"flower exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            return client.get("/healthcheck").text == "OK"
        except httpx.TransportError:
            return False

    try:
        wait_for(healthy, timeout=60, what="flower to answer")
        yield client
    finally:
        client.close()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def chain_tasks(client: httpx.Client, version_id: str) -> dict[str, dict]:
    """Flower's tasks whose argument is this version, by task name."""
    tasks = client.get("/api/tasks").raise_for_status().json()
    return {t["name"]: t | {"uuid": u} for u, t in tasks.items() if version_id in (t["args"] or "")}


def test_flower_shows_the_chain_of_an_ingested_document(pipeline: PipelineEnv) -> None:
    with flower(pipeline.env, pipeline.tmp) as client, pipeline.worker() as worker:
        # Flower has the event stream once the worker's heartbeat reaches it.
        online = wait_for(
            lambda: ONLINE.findall(client.get("/metrics").text),
            timeout=60,
            what="flower to see the worker online",
        )
        submitted = pipeline.submit(PAGE.encode(), "knee.md")
        version_id = str(submitted.version_id)
        assert pipeline.wait_done(submitted.version_id).status == Status.INDEXED

        def all_succeeded() -> dict[str, dict] | None:
            found = chain_tasks(client, version_id)
            done = set(CHAIN) <= found.keys() and all(
                found[name]["state"] == "SUCCESS" for name in CHAIN
            )
            return found if done else None

        tasks = wait_for(all_succeeded, timeout=60, what="flower to show the chain succeeded")
        # Each stage carries the batch the one before it finished (here a batch of one).
        args = [list(literal_eval(tasks[name]["args"])) for name in CHAIN]
        assert args == [[[version_id]]] * 5

        info = client.get(f"/api/task/info/{tasks['ingest.embed']['uuid']}").raise_for_status()
        embed = info.json()
        assert embed["name"] == "ingest.embed" and embed["state"] == "SUCCESS"
        assert list(literal_eval(embed["args"])) == [[version_id]] and embed["worker"] in online
        assert embed["routing_key"] == "io"
        assert tasks["ingest.convert"]["routing_key"] == "cpu"

        metrics = client.get("/metrics").text
        for name in CHAIN:
            assert re.search(
                rf'^flower_events_total\{{task="{name}",type="task-succeeded",worker="[^"]+"\}} '
                r"[1-9]",
                metrics,
                re.MULTILINE,
            ), f"no task-succeeded count for {name}"
        assert "flower_task_runtime_seconds_bucket" in metrics
        worker_log = worker.output()

    finished = [
        line
        for line in map(str.strip, worker_log.splitlines())
        if line.startswith("{") and '"ingest finished"' in line
    ]
    assert len(finished) == 1, worker_log[-3000:]
    entry = json.loads(finished[0])
    assert entry["version_id"] == version_id
    assert entry["document_id"] == str(submitted.document_id)
    assert entry["task_id"] == tasks["ingest.finalize"]["uuid"]
    assert entry["stage"] == "finalize" and entry["level"] == "info"
    assert entry["chunk_count"] >= 1 and entry["tokens_spent"] > 0
    print(finished[0])  # the sample shown in docs/operations.md (pytest -s)
    done = [
        json.loads(line)
        for line in map(str.strip, worker_log.splitlines())
        if line.startswith("{") and '"stage done"' in line
    ]
    assert {entry["stage"] for entry in done} == {"convert", "chunk", "embed", "upsert", "finalize"}
    assert {entry["document_id"] for entry in done} == {str(submitted.document_id)}


def test_flower_with_a_login_refuses_strangers(redis_url: str, tmp_path: Path) -> None:
    env = {"REDIS_URL": redis_url, "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")}
    with flower(env, tmp_path, login="ops:s3cret-flower") as client:
        assert client.get("/api/tasks").status_code == 401
        assert client.get("/tasks").status_code == 401
        assert client.get("/api/tasks", auth=("ops", "wrong")).status_code == 401
        assert client.get("/api/tasks", auth=("ops", "s3cret-flower")).status_code == 200
        # Open by Flower's design: why its port stays internal (docs/operations.md).
        assert client.get("/metrics").status_code == 200

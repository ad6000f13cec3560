"""Benchmark: `POST /v1/search` over loopback on a collection of at least 10,000 chunks.

Builds a local Qdrant collection from the shared corpus (repeated until it holds `--chunks`
chunks; real convert, chunk, payload and sparse-vector code, vectors from the OpenAI stand-in
at zero latency), starts the API with `ingest api` in a subprocess, and sends `--requests`
searches per mode, one at a time, with the corpus questions. Reports p50/p95 of the whole
request and the server's own step timings (embed, candidates, rerank). The difference between
"hybrid + rerank" and "dense, no rerank" is what fusion and the rerank add.

    uv run python bench/search.py [--chunks 10000] [--requests 200] [--keep DIR]
        [--copy SOURCE:TARGET] [--serve LABEL=COLLECTION[@SRC]] ... [--rounds N]

`--keep DIR` keeps the local Qdrant folder in DIR and reuses it on the next run (building
10,000 chunks takes about 5 minutes). Side by side in one run: `--serve` runs the API of the
source tree SRC (default this one; e.g. `git archive main | tar -x -C /tmp/main` for the
code before a change) on COLLECTION of the same folder, once per round, the servers taking
turns; `--copy bench:bench_new` first copies the points of one collection into a new one
made by this code (its distance), without re-embedding. The targets are checked on the last
`--serve`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))

# ruff: noqa: E402
import httpx
from qdrant_client import QdrantClient

from shared.adapters.qdrant import Point, QdrantIndex
from shared.migrate import upgrade
from shared.pipeline.embed import make_embedder
from shared.retrieval.memory_index import build, corpus_files
from shared.settings import Settings
from tests.fakes.openai_server import FakeOpenAI
from tests.services import temporary_postgres_database
from tests.workers import wait_for

API_KEY = "bench-key-0123456789"
CORPUS = ROOT.parent / "shared" / "corpus"
QUESTIONS = ROOT / "tests" / "corpus" / "questions.jsonl"
MODES = {
    "dense, no rerank": {"hybrid": False, "rerank": False},
    "dense + rerank": {"hybrid": False, "rerank": True},
    "hybrid, no rerank": {"hybrid": True, "rerank": False},
    "hybrid + rerank (default)": {"hybrid": True, "rerank": True},
    "hybrid + rerank, filter language=en": {"filters": {"language": "en"}},
    "hybrid + rerank, a new filter each request": {"filters": "fresh"},
}
COLUMNS = ["p50", "p95", "embed p50", "candidates p50", "rerank p50"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fill(path: Path, env: dict[str, str], chunks: int) -> int:
    """Index the corpus into the collection again and again until it holds `chunks`."""
    settings = Settings(**{k.lower(): v for k, v in env.items()})
    embedder = make_embedder(settings)
    client = QdrantClient(path=str(path))
    index = QdrantIndex(client, env["QDRANT_COLLECTION"], embedder.dimensions, local=True)
    files = corpus_files(CORPUS)
    try:
        while index.count() < chunks:
            build(files, CORPUS, settings, embedder, index)
        return index.count()
    finally:
        client.close()


def copy(path: Path, source: str, target: str, dimensions: int) -> int:
    """Copy every point of `source` into `target`, a collection this code creates."""
    client = QdrantClient(path=str(path))
    try:
        if client.collection_exists(target):
            return client.count(target, exact=True).count
        index = QdrantIndex(client, target, dimensions, local=True)
        offset = None
        while True:
            records, offset = client.scroll(
                source, limit=512, offset=offset, with_payload=True, with_vectors=True
            )
            points = [
                Point(uuid.UUID(str(r.id)), r.vector["dense"], r.payload or {}, r.vector["sparse"])  # type: ignore[index,call-overload]
                for r in records
            ]
            index.upsert(points)
            if offset is None:
                return index.count()
    finally:
        client.close()


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run_mode(base: str, questions: list[str], requests: int, options: dict) -> dict[str, float]:
    latencies: list[float] = []
    steps: dict[str, list[float]] = {}
    headers = {"Authorization": f"Bearer {API_KEY}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        for n in range(requests + 10):
            body = {"query": questions[n % len(questions)], **options}
            if options.get("filters") == "fresh":  # never seen before: nothing kept helps
                since = f"2000-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
                body["filters"] = {"language": "en", "updated_since": since}
            started = time.perf_counter()
            response = http.post("/v1/search", json=body)
            elapsed = time.perf_counter() - started
            response.raise_for_status()
            if n < 10:
                continue  # warm-up
            latencies.append(elapsed * 1000)
            for step, ms in response.json()["timings_ms"].items():
                steps.setdefault(step, []).append(ms)
    result = {"p50": statistics.median(latencies), "p95": percentile(latencies, 95)}
    for step, values in steps.items():
        result[f"{step} p50"] = statistics.median(values)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="reuse (or build and keep) this Qdrant folder")
    parser.add_argument("--copy", help="SOURCE:TARGET collection, copied before the runs")
    parser.add_argument("--serve", action="append", help="LABEL=COLLECTION[@SRC] (repeatable)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()]
    servers = [_server(spec) for spec in args.serve or ["this code=bench"]]

    with (
        temporary_postgres_database() as database_url,
        FakeOpenAI() as fake,
        tempfile.TemporaryDirectory() as tmp,
    ):
        upgrade(database_url)
        env = {
            "DATABASE_URL": database_url,
            "QDRANT_PATH": str(args.keep or Path(tmp) / "qdrant"),
            "QDRANT_COLLECTION": "bench",
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": fake.base_url,
            "API_KEYS": f"bench:{API_KEY}",
            "LOG_LEVEL": "WARNING",
        }
        started = time.perf_counter()
        stored = fill(Path(env["QDRANT_PATH"]), env, args.chunks)
        print(f"collection: {stored} chunks built in {time.perf_counter() - started:.0f} s")
        if args.copy:
            source, target = args.copy.split(":")
            started = time.perf_counter()
            copied = copy(Path(env["QDRANT_PATH"]), source, target, 1536)
            print(f"{target}: {copied} points copied in {time.perf_counter() - started:.0f} s")
        runs: dict[str, list[dict[str, dict[str, float]]]] = {label: [] for label, *_ in servers}
        for round_ in range(args.rounds):
            turn = round_ % len(servers)  # each server goes first in some round
            for label, collection, src in servers[turn:] + servers[:turn]:
                server_env = {**env, "QDRANT_COLLECTION": collection}
                with _api(src, server_env, Path(tmp) / "api.log") as base:
                    runs[label].append(
                        {n: run_mode(base, questions, args.requests, o) for n, o in MODES.items()}
                    )
                print(f"round {round_ + 1}: {label} done", flush=True)

    print(
        f"{args.requests} sequential requests per mode over loopback, stand-in at 0 latency; "
        f"medians of {args.rounds} round(s)"
    )
    print(f"| server | mode | {' | '.join(COLUMNS)} |")
    print(f"|---|---|{'---:|' * len(COLUMNS)}")
    for label, rounds in runs.items():
        results = {
            mode: {c: statistics.median(r[mode].get(c, 0) for r in rounds) for c in COLUMNS}
            for mode in MODES
        }
        for name, result in results.items():
            cells = " | ".join(f"{result[c]:.1f} ms" for c in COLUMNS)
            print(f"| {label} | {name} | {cells} |")
        baseline, full = results["dense, no rerank"], results["hybrid + rerank (default)"]
        added = full["p50"] - baseline["p50"]
        print(f"{label}: fusion + rerank add (p50 difference): {added:.1f} ms")
    # the target is checked on the last server (the code and collection under test)
    if added >= 5 or full["p95"] >= 100:
        sys.exit("FAILED: fusion + rerank must add < 5 ms and the request p95 be < 100 ms")


def _server(spec: str) -> tuple[str, str, Path]:
    label, _, rest = spec.partition("=")
    collection, _, src = rest.partition("@")
    return label, collection or "bench", Path(src).resolve() if src else ROOT


@contextlib.contextmanager
def _api(src: Path, env: dict[str, str], log: Path) -> Iterator[str]:
    """`ingest api` of the source tree `src` (its packages first on the path)."""
    port = free_port()
    with open(log, "ab") as api_log:
        api = subprocess.Popen(
            [str(Path(sys.executable).parent / "ingest"), "api", "--port", str(port)],
            cwd=src,
            env={**os.environ, **env, "PYTHONPATH": str(src)},
            stdout=api_log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: _up(base), timeout=120, what="the API to listen")
            yield base
        finally:
            api.terminate()
            api.wait(timeout=60)


def _up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()

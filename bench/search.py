"""Benchmark: `POST /v1/search` over loopback on a collection of at least 10,000 chunks.

Builds a local Qdrant collection from the shared corpus (repeated until it holds `--chunks`
chunks; real convert, chunk, payload and sparse-vector code, vectors from the OpenAI stand-in
at zero latency), starts the API with `ingest api` in a subprocess, and sends `--requests`
searches per mode, one at a time, with the corpus questions. Reports p50/p95 of the whole
request and the server's own step timings (embed, candidates, rerank). The difference between
"hybrid + rerank" and "dense, no rerank" is what fusion and the rerank add.

    uv run python bench/search.py [--chunks 10000] [--requests 200]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))

# ruff: noqa: E402
import httpx
from qdrant_client import QdrantClient

from shared.adapters.qdrant import QdrantIndex
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
}


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


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run_mode(base: str, questions: list[str], requests: int, options: dict) -> dict[str, float]:
    latencies: list[float] = []
    steps: dict[str, list[float]] = {}
    headers = {"Authorization": f"Bearer {API_KEY}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        for n in range(requests + 10):
            body = {"query": questions[n % len(questions)], **options}
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
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()]

    with (
        temporary_postgres_database() as database_url,
        FakeOpenAI() as fake,
        tempfile.TemporaryDirectory() as tmp,
    ):
        upgrade(database_url)
        port = free_port()
        env = {
            "DATABASE_URL": database_url,
            "QDRANT_PATH": str(Path(tmp) / "qdrant"),
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
        api_log = open(Path(tmp) / "api.log", "wb")  # noqa: SIM115
        api = subprocess.Popen(
            [str(Path(sys.executable).parent / "ingest"), "api", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=api_log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: _up(base), timeout=60, what="the API to listen")
            results = {
                name: run_mode(base, questions, args.requests, o) for name, o in MODES.items()
            }
        finally:
            api.terminate()
            api.wait(timeout=30)
            api_log.close()

    print(f"{args.requests} sequential requests per mode over loopback, stand-in at 0 latency")
    columns = ["p50", "p95", "embed p50", "candidates p50", "rerank p50"]
    print(f"| mode | {' | '.join(columns)} |")
    print(f"|---|{'---:|' * len(columns)}")
    for name, result in results.items():
        cells = " | ".join(f"{result.get(c, 0):.1f} ms" for c in columns)
        print(f"| {name} | {cells} |")
    baseline, full = results["dense, no rerank"], results["hybrid + rerank (default)"]
    added = full["p50"] - baseline["p50"]
    print(f"fusion + rerank add (p50 difference): {added:.1f} ms")
    if added >= 5 or full["p95"] >= 100:
        sys.exit("FAILED: fusion + rerank must add < 5 ms and the request p95 be < 100 ms")


def _up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()

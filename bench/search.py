"""Benchmark: `POST /v1/search` over loopback on a collection of at least 10,000 chunks.

Builds a local Qdrant collection from the shared corpus (repeated until it holds `--chunks`
chunks; real convert, chunk, payload and sparse-vector code, vectors from the OpenAI stand-in
at zero latency), starts the API with `ingest api` in a subprocess, and sends `--requests`
searches per mode, one at a time, the modes in turns question by question, with the corpus
questions. Reports p50/p95 of the whole request and the server's own step timings (embed,
candidates, rerank). What fusion and the rerank add: the server's candidates + rerank steps of
"hybrid + rerank" minus those of "dense, no rerank" for the same question (median).

    uv run --group dev python bench/search.py [--chunks 10000] [--requests 200] [--keep DIR]
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
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))

# ruff: noqa: E402
import httpx
import numpy as np

from shared.adapters.index import Point
from shared.adapters.qdrant_edge import EdgeIndex
from shared.migrate import upgrade
from shared.pipeline.embed import make_embedder
from shared.retrieval.filters import SearchFilters
from shared.retrieval.memory_index import build, corpus_files
from shared.retrieval.search import SearchRequest, search
from shared.settings import Settings
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.private_services import chosen_services
from tests.support.services import temporary_postgres_database
from tests.support.workers import wait_for

API_KEY = "bench-key-0123456789"
CORPUS = Path(os.environ.get("BENCH_CORPUS") or ROOT.parent / "shared" / "corpus")
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
MEMORY = ("VmRSS", "VmHWM")  # the server's resident set now and at its peak, after the runs


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fill(path: Path, env: dict[str, str], chunks: int) -> int:
    """Index the corpus once, then copies of its points (new ids and documents, vectors
    moved a little) until the collection holds `chunks`: 100,000 in about 90 s of upserts
    instead of half an hour of converting and chunking the corpus again and again."""
    settings = Settings(**{k.lower(): v for k, v in env.items()})
    embedder = make_embedder(settings)
    index = EdgeIndex.open(str(path), env["QDRANT_COLLECTION"], embedder.dimensions)
    files = corpus_files(CORPUS)
    if not files:  # else the loop below never ends
        sys.exit(f"no corpus files under {CORPUS} (set BENCH_CORPUS)")
    try:
        if index.count() == 0:  # one real pass: convert, chunk, embed, payloads, sparse
            build(files, CORPUS, settings, embedder, index)
        # read only when copies are to be made: a kept 100,000-point folder took 87 s to read
        corpus = index.retrieve(sorted(index.all_point_ids())) if index.count() < chunks else []
        noise = np.random.default_rng(30)
        while index.count() < chunks:  # copies with new ids and documents, vectors moved a little
            documents: dict[str, str] = {}
            copies = []
            for point in corpus:
                payload = dict(point.payload)
                old = str(payload.get("document_id"))
                payload["document_id"] = documents.setdefault(old, str(uuid.uuid4()))
                moved = np.asarray(point.vector) + noise.normal(0, 0.01, len(point.vector))
                copies.append(Point(uuid.uuid4(), moved.tolist(), payload, point.sparse))
            index.upsert(copies)
        started = time.perf_counter()
        index.build()
        print(f"index build: {time.perf_counter() - started:.1f} s for {index.count()} points")
        return index.count()
    finally:
        index.close()


def copy(path: Path, source: str, target: str, dimensions: int) -> int:
    """Copy every point of `source` into `target`, a collection this code creates."""
    new = EdgeIndex.open(str(path), target, dimensions)
    old = new.sibling(source)
    try:
        if new.count():
            return new.count()
        for page in old.payload_pages():
            new.upsert(old.retrieve([point for point, _ in page]))
        new.build()
        return new.count()
    finally:
        old.close()
        new.close()


def memory_mb(pid: int) -> dict[str, float]:
    """The process's resident memory now and at its peak (MB), from /proc."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    return {name: int(fields[name].split()[0]) / 1024 for name in MEMORY}


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run_modes(
    send: Callable[[dict], dict[str, float]], questions: list[str], requests: int
) -> dict[str, dict[str, float]]:
    """Every mode once per question, in turns (the order rotating), so that the machine's
    load falls on all modes alike; "fusion + rerank add" is the median of the per-question
    difference of the server's own steps (candidates + rerank), hybrid + rerank against
    dense without rerank."""
    latencies: dict[str, list[float]] = {mode: [] for mode in MODES}
    steps: dict[str, dict[str, list[float]]] = {mode: {} for mode in MODES}
    names = list(MODES)
    for n in range(requests + 10):
        turn = n % len(names)
        for mode in names[turn:] + names[:turn]:
            options = MODES[mode]
            body = {"query": questions[n % len(questions)], **options}
            if options.get("filters") == "fresh":  # never seen before: nothing kept helps
                since = f"2000-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
                body["filters"] = {"language": "en", "updated_since": since}
            started = time.perf_counter()
            timings = send(body)
            elapsed = time.perf_counter() - started
            if n < 10:
                continue  # warm-up
            latencies[mode].append(elapsed * 1000)
            for step, ms in timings.items():
                steps[mode].setdefault(step, []).append(ms)
    results = {}
    for mode in MODES:
        result = {"p50": statistics.median(latencies[mode]), "p95": percentile(latencies[mode], 95)}
        for step, values in steps[mode].items():
            result[f"{step} p50"] = statistics.median(values)
        results[mode] = result
    full, dense = steps["hybrid + rerank (default)"], steps["dense, no rerank"]
    added = [
        f_c + f_r - d_c - d_r
        for f_c, f_r, d_c, d_r in zip(
            full["candidates"], full["rerank"], dense["candidates"], dense["rerank"], strict=True
        )
    ]
    results["hybrid + rerank (default)"]["added p50"] = statistics.median(added)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="reuse (or build and keep) this Qdrant folder")
    parser.add_argument("--copy", help="SOURCE:TARGET collection, copied before the runs")
    parser.add_argument("--serve", action="append", help="LABEL=COLLECTION[@SRC] (repeatable)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--in-process", action="store_true", help="call search() here instead of the API"
    )
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()]
    servers = [_server(spec) for spec in args.serve or ["this code=bench"]]

    with (
        chosen_services() as services,
        temporary_postgres_database(services.postgres_admin_url()) as database_url,
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
                if args.in_process:
                    with _in_process(server_env) as send:
                        runs[label].append(run_modes(send, questions, args.requests))
                else:
                    with _api(src, server_env, Path(tmp) / "api.log") as send:
                        runs[label].append(run_modes(send, questions, args.requests))
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
        full = results["hybrid + rerank (default)"]
        added = statistics.median(r["hybrid + rerank (default)"]["added p50"] for r in rounds)
        print(
            f"{label}: fusion + rerank add {added:.1f} ms (server steps, candidates + rerank, "
            "median per-question difference to dense without rerank)"
        )
    if stored >= 100_000:  # issue 30 item 5, reported (the machine's load decides it too)
        met = "met" if full["p95"] < 20 else "not met"
        print(f"{label}: hybrid + rerank p95 {full['p95']:.1f} ms, {stored} chunks: < 20 ms {met}")
    # the target is checked on the last server (the code and collection under test)
    if added >= 5 or full["p95"] >= 100:
        sys.exit("FAILED: fusion + rerank must add < 5 ms and the request p95 be < 100 ms")


def _server(spec: str) -> tuple[str, str, Path]:
    label, _, rest = spec.partition("=")
    collection, _, src = rest.partition("@")
    return label, collection or "bench", Path(src).resolve() if src else ROOT


@contextlib.contextmanager
def _in_process(env: dict[str, str]) -> Iterator[Callable[[dict], dict[str, float]]]:
    """`search()` of this code called directly: the figures without HTTP and the API."""
    settings = Settings(**{k.lower(): v for k, v in env.items()})

    def send(body: dict) -> dict[str, float]:
        filters = SearchFilters.from_dict(body.get("filters") or {})
        wanted = SearchRequest(
            body["query"], filters, None, None, body.get("hybrid"), body.get("rerank")
        )
        return search(wanted, settings).timings_ms

    yield send


@contextlib.contextmanager
def _api(src: Path, env: dict[str, str], log: Path) -> Iterator[Callable[[dict], dict[str, float]]]:
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
        headers = {"Authorization": f"Bearer {API_KEY}"}
        try:
            wait_for(lambda: _up(base), timeout=120, what="the API to listen")
            with httpx.Client(base_url=base, headers=headers, timeout=30) as http:

                def send(body: dict) -> dict[str, float]:
                    response = http.post("/v1/search", json=body)
                    response.raise_for_status()
                    return response.json()["timings_ms"]

                yield send
                memory = memory_mb(api.pid)
                print(
                    "server memory after the runs: "
                    + ", ".join(f"{name} {mb:.0f} MB" for name, mb in memory.items()),
                    flush=True,
                )
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

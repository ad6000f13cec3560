"""Benchmark (issue 30, item 3): what Qdrant Edge's HNSW build costs and what it buys.

For each size (default 2,000, 6,000 and 20,000 points of 1536 dimensions, with sparse vectors
and payloads shaped like ours) through our Edge adapter: search latency brute force (dense,
hybrid, filtered; median of `--queries`), then `optimize()` (the HNSW build) while a second
thread ticks every millisecond: the longest gap between its ticks is how long the build froze
the other threads (Edge holds the GIL), then the same searches on the built index.

`--aside`: the build as `ingest serve` does it instead (`shared.adapters.edge_build`): the
snapshot (flush and copy of the folder), the child process's build, the swap (the writes made
meanwhile replayed), each timed, while a second thread searches (hybrid) in a loop: its
longest search and its p50 / p99 during all of it are what a request of the server would see.

    uv run python bench/edge_build.py [--sizes 2000,6000,20000] [--queries 50] [--aside]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.adapters import edge_build  # noqa: E402
from shared.adapters.index import Point, SparseVector  # noqa: E402
from shared.adapters.qdrant_edge import EdgeIndex, _load  # noqa: E402
from shared.retrieval.filters import SearchFilters  # noqa: E402

DIMENSIONS = 1536


def points(count: int, seed: int = 0) -> list[Point]:
    """Random unit vectors, ~60 sparse terms, a payload of our fields and ~1,500 characters."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIMENSIONS)).astype(np.float32)
    made = []
    for n in range(count):
        terms = np.unique(rng.integers(0, 50_000, 60))
        payload = {
            "document_id": str(uuid.UUID(int=n // 10 + 1)),
            "external_id": f"page-{n // 10}",
            "source": "cms",
            "tags": ["surgery"] if n % 20 == 0 else ["general"],
            "language": "nl",
            "heading_paths": [f"Chapter {n % 50}"],
            "updated_at": "2025-01-01T00:00:00+00:00",
            "hidden": False,
            "text": "woord " * 250,
        }
        sparse = SparseVector(terms.tolist(), rng.random(len(terms)).tolist())
        made.append(Point(uuid.UUID(int=n + 1), vectors[n].tolist(), payload, sparse))
    return made


def median_ms(run: Callable[[int], object], queries: int) -> float:
    times = []
    for q in range(queries):
        start = time.perf_counter()
        run(q)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def searches(index: EdgeIndex, queries: int) -> dict[str, float]:
    rng = np.random.default_rng(99)
    asked = [rng.standard_normal(DIMENSIONS).tolist() for _ in range(queries)]
    terms = [SparseVector(rng.integers(0, 50_000, 8).tolist(), [1.0] * 8)]
    flt = SearchFilters(tags=("surgery",)).to_filter()
    fields = ["document_id", "text"]
    return {
        "dense": median_ms(lambda q: index.candidates(asked[q], None, 50, None, fields), queries),
        "hybrid": median_ms(
            lambda q: index.candidates(asked[q], terms[0], 50, None, fields), queries
        ),
        "filtered": median_ms(
            lambda q: index.candidates(asked[q], terms[0], 50, flt, fields), queries
        ),
    }


def frozen_build(index: EdgeIndex) -> tuple[float, float]:
    """Seconds `optimize()` took, and the longest gap between a second thread's 1 ms ticks."""
    stop = threading.Event()
    gaps: list[float] = []

    def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    start = time.perf_counter()
    index.shard.optimize()
    took = time.perf_counter() - start
    stop.set()
    ticker.join()
    return took, max(gaps)


def aside_build(index: EdgeIndex, queries: int) -> dict[str, float]:
    """The child-process build with a searching thread: phases' seconds, search latencies."""
    rng = np.random.default_rng(7)
    asked = [rng.standard_normal(DIMENSIONS).tolist() for _ in range(queries)]
    terms = SparseVector(rng.integers(0, 50_000, 8).tolist(), [1.0] * 8)
    stop = threading.Event()
    latencies: list[float] = []

    def search() -> None:
        q = 0
        while not stop.is_set():
            start = time.perf_counter()
            index.candidates(asked[q % queries], terms, 50, None, ["document_id", "text"])
            latencies.append((time.perf_counter() - start) * 1000)
            q += 1
            time.sleep(0.005)  # a request every few ms, as a busy site's would come

    searcher = threading.Thread(target=search)
    searcher.start()
    figures: dict[str, float] = {}
    try:
        start = time.perf_counter()
        edge_build.start(index.holder)
        figures["snapshot s"] = time.perf_counter() - start
        build = index.holder.build
        assert build is not None
        index.upsert(points(200, seed=1))  # written during the build: replayed at the swap
        start = time.perf_counter()
        while build.exit_code() is None:
            time.sleep(0.2)
        figures["child build s"] = time.perf_counter() - start
        assert build.exit_code() == 0
        start = time.perf_counter()
        edge_build.swap(index.holder, _load)
        figures["swap s"] = time.perf_counter() - start
    finally:
        stop.set()
        searcher.join()
    figures["searches"] = len(latencies)
    figures["search p50 ms"] = statistics.median(latencies)
    figures["search p99 ms"] = float(np.percentile(latencies, 99))
    figures["longest search ms"] = max(latencies)
    with index.holder.reading() as shard:
        figures["brute force after"] = edge_build.unbuilt(shard)
    return figures


def main_aside(sizes: list[int], queries: int) -> None:
    print(
        "| points | snapshot s | child build s | swap s | searches | search p50 / p99 ms "
        "| longest search ms | HNSW dense / hybrid / filtered ms after |"
    )
    print("|---:|---:|---:|---:|---:|---|---:|---|")
    for size in sizes:
        index = EdgeIndex.temporary("bench", DIMENSIONS)
        try:
            index.upsert(points(size))
            f = aside_build(index, queries)
            after = " / ".join(f"{v:.1f}" for v in searches(index, queries).values())
            print(
                f"| {size:,} | {f['snapshot s']:.2f} | {f['child build s']:.1f} "
                f"| {f['swap s']:.2f} | {f['searches']:,.0f} "
                f"| {f['search p50 ms']:.1f} / {f['search p99 ms']:.1f} "
                f"| {f['longest search ms']:.0f} | {after} |",
                flush=True,
            )
        finally:
            index.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2000,6000,20000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--aside", action="store_true", help="the build as `ingest serve` does")
    args = parser.parse_args()
    if args.aside:
        main_aside([int(s) for s in args.sizes.split(",")], args.queries)
        return
    print(
        "| points | brute force dense / hybrid / filtered ms | build s | longest freeze s "
        "| HNSW dense / hybrid / filtered ms |"
    )
    print("|---:|---|---:|---:|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        index = EdgeIndex.temporary("bench", DIMENSIONS)
        try:
            index.upsert(points(size))
            before = searches(index, args.queries)
            took, freeze = frozen_build(index)
            after = searches(index, args.queries)
            row = " / ".join(f"{before[k]:.1f}" for k in before)
            built = " / ".join(f"{after[k]:.1f}" for k in after)
            print(f"| {size:,} | {row} | {took:.1f} | {freeze:.1f} | {built} |", flush=True)
        finally:
            index.close()


if __name__ == "__main__":
    main()

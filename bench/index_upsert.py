"""Benchmark (issue 30, item 5): 20,000 points of 1536 dimensions (sparse vectors and payloads
shaped like ours) upserted through our Edge adapter (`EdgeIndex.upsert`: unit length, our
point conversion, batches, a flush) against raw qdrant_edge bulk upserts of the same data
(points built from the same lists, one `update` per 1,000, a flush), in turns, `--rounds`
rounds, each into a new folder. Target: ours within 1.5x of Edge's own. Then the median
latency of dense / hybrid / filtered `candidates` through the adapter on the 20,000 (brute
force: no HNSW build; see bench/edge_build.py for built indexes).

    uv run python bench/index_upsert.py [--points 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import qdrant_edge as edge

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.edge_build import points, searches  # noqa: E402
from shared.adapters.index import DENSE, SPARSE, Point  # noqa: E402
from shared.adapters.qdrant_edge import EdgeIndex  # noqa: E402


def ours(data: list[Point]) -> tuple[float, EdgeIndex]:
    index = EdgeIndex.temporary("bench", len(data[0].vector))
    index.ensure_collection()
    start = time.perf_counter()
    index.upsert(data)
    return time.perf_counter() - start, index


def raw(data: list[Point]) -> float:
    """Edge's own bulk path on the same folder layout (our config: made by our adapter)."""
    index = EdgeIndex.temporary("raw", len(data[0].vector))
    shard = index.shard
    start = time.perf_counter()
    for first in range(0, len(data), 1000):
        shard.update(
            edge.UpdateOperation.upsert_points(
                [
                    edge.Point(
                        str(p.id),
                        {
                            DENSE: p.vector,
                            SPARSE: edge.SparseVector(p.sparse.indices, p.sparse.values),  # type: ignore[union-attr]
                        },
                        p.payload,
                    )
                    for p in data[first : first + 1000]
                ]
            )
        )
    shard.flush()
    took = time.perf_counter() - start
    index.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()
    data = points(args.points)
    times: dict[str, list[float]] = {"ours": [], "edge": []}
    last: EdgeIndex | None = None
    for _ in range(args.rounds):
        times["edge"].append(raw(data))
        took, index = ours(data)
        times["ours"].append(took)
        if last is not None:
            last.close()
        last = index
        print(f"round: edge {times['edge'][-1]:.2f} s, ours {took:.2f} s", flush=True)
    edge_s, ours_s = statistics.median(times["edge"]), statistics.median(times["ours"])
    print(f"median: edge {edge_s:.2f} s, ours {ours_s:.2f} s, ratio {ours_s / edge_s:.2f}x")
    assert last is not None
    try:
        found = searches(last, args.queries)
        print("candidates at", args.points, "points (ms, median):", found)
    finally:
        last.close()


if __name__ == "__main__":
    main()

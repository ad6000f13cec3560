"""This chunker against another checkout's and LangChain's, interleaved document by document.

    uv run --group dev python bench/chunking_versus.py --other ../main-copy --rounds 6

`bench/chunking.py` times each contender in its own subprocess, one after the other; on a
shared machine the load moves between those runs by more than the differences measured. Here
three persistent workers (this checkout's chunker, the other checkout's, LangChain's) each
chunk the same document in turn (rotating who goes first) and report the wall and CPU time
it took them, so a change of load hits all three alike. CPU time (the worker's own) moves
least. Same corpus, warm-up and settings as `bench/chunking.py`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = r"""
import sys, time
root, name = sys.argv[1], sys.argv[2]
sys.path[:0] = [root, root + "/bench"]
import chunking as bench
docs = bench.corpus()
split = bench.make(name)
split(docs[0])
print(sum(len(doc.encode()) for doc in docs) / 1e6, len(docs), flush=True)
for line in sys.stdin:
    doc = docs[int(line)]
    wall, cpu = time.perf_counter(), time.process_time()
    split(doc)
    print(time.perf_counter() - wall, time.process_time() - cpu, flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--other", required=True, help="another checkout (e.g. of main)")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
    contenders = {
        "other": (str(Path(args.other).resolve()), "this"),
        "this": (str(ROOT), "this"),
        "langchain": (str(ROOT), "langchain"),
    }
    workers = {
        name: subprocess.Popen(
            [sys.executable, "-c", WORKER, *spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name, spec in contenders.items()
    }
    for worker in workers.values():
        megabytes, count = worker.stdout.readline().split()  # type: ignore[union-attr]
    names = list(workers)
    rounds: list[tuple[dict[str, float], dict[str, float]]] = []
    for number in range(1, args.rounds + 1):
        wall, cpu = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
        for index in range(int(count)):
            for name in names[index % 3 :] + names[: index % 3]:
                worker = workers[name]
                worker.stdin.write(f"{index}\n")  # type: ignore[union-attr]
                worker.stdin.flush()  # type: ignore[union-attr]
                took_wall, took_cpu = map(float, worker.stdout.readline().split())  # type: ignore[union-attr]
                wall[name] += took_wall
                cpu[name] += took_cpu
        rounds.append((wall, cpu))
        speeds = ", ".join(f"{name} {float(megabytes) / wall[name]:.2f}" for name in names)
        ratios = ", ".join(
            f"{name} {wall['langchain'] / wall[name]:.2f}x / {cpu['langchain'] / cpu[name]:.2f}x"
            for name in ("this", "other")
        )
        print(f"round {number}: MB/s {speeds}; vs LangChain (wall / CPU): {ratios}", flush=True)
    for worker in workers.values():
        worker.stdin.close()  # type: ignore[union-attr]
        worker.wait()
    for name in ("this", "other"):
        by_wall = statistics.median(w["langchain"] / w[name] for w, _ in rounds)
        by_cpu = statistics.median(c["langchain"] / c[name] for _, c in rounds)
        speed = statistics.median(float(megabytes) / w[name] for w, _ in rounds)
        print(f"{name}: {speed:.2f} MB/s; vs LangChain {by_wall:.2f}x wall, {by_cpu:.2f}x CPU")
    langchain = statistics.median(float(megabytes) / w["langchain"] for w, _ in rounds)
    print(f"langchain: {langchain:.2f} MB/s")


if __name__ == "__main__":
    main()

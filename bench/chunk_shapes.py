"""Chunking time per input shape and size: every shape must grow linearly.

    uv run python bench/chunk_shapes.py                 # 100 KB, 1 MB, 4 MB (a few minutes)
    uv run python bench/chunk_shapes.py --sizes 20000 80000 --shapes table

Each shape is made at each size by repeating a small unit (`tests/support/chunk_shapes.py`); the
report gives the CPU time of this process (a busy neighbour on the machine counts less than in
wall time) at each size and, per step, the time ratio against the size ratio: about equal is
linear, a time ratio well above the size ratio is not. Single thread, after a warm-up. Not a
test (the property test in tests/unit/shared/pipeline/chunk/test_linear.py guards the same
shapes at small sizes).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.pipeline.chunk import chunk_markdown  # noqa: E402
from tests.support.chunk_shapes import SHAPES  # noqa: E402


def timed(make: Callable[[int], str], size: int) -> tuple[float, int]:
    text = make(size)
    began = time.process_time()
    chunks = chunk_markdown(text)
    return time.process_time() - began, len(chunks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 4_000_000])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES))
    args = parser.parse_args()
    chunk_markdown(SHAPES["prose"](5_000))  # warm-up: tiktoken's vocabulary, regexes
    sizes = args.sizes
    header = " | ".join(f"{s / 1e6:g} MB" for s in sizes)
    steps = " | ".join(f"x{b / a:g} size: time" for a, b in itertools.pairwise(sizes))
    print(f"| shape | {header} | {steps} | chunks at {sizes[-1] / 1e6:g} MB |")
    print("|" + "---|" * (2 + 2 * len(sizes) - 1))
    for name in args.shapes:
        times: list[float] = []
        count = 0
        for size in sizes:
            seconds, count = timed(SHAPES[name], size)
            times.append(seconds)
        cells = " | ".join(f"{t:.2f} s" for t in times)
        ratios = " | ".join(f"x{b / max(a, 1e-9):.1f}" for a, b in itertools.pairwise(times))
        print(f"| {name} | {cells} | {ratios} | {count} |", flush=True)


if __name__ == "__main__":
    main()

"""Start-up time of the CLI commands a user types most (the aim: `ingest --help`
and `ingest status` under 0.5 s), whole processes, wall clock.

    uv run --group dev python bench/startup.py [--rounds 15] [--tree OTHER_CHECKOUT ...]

Prepares an embedded database (SQLite, local Qdrant, hashing embedder) with the four
`examples/` documents in a temporary folder, then runs each command `--rounds` times,
interleaved with `python -c pass` (the interpreter's own floor) and with the same commands
from each `--tree` (another checkout of this repository, e.g. the previous main, put first on
PYTHONPATH), so every contender sees the same load. Bytecode is written and warmed first: a
user's second run is what counts. Prints median and best per command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (("--help",), ("status",))


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    args = parser.parse_args()
    trees = [ROOT, *(tree.resolve() for tree in args.tree)]
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base.pop("DATABASE_URL", None)
        base.pop("OPENAI_API_KEY", None)
        subprocess.run(
            [sys.executable, "-m", "worker.cli.main", "run", str(ROOT / "examples")],
            cwd=cwd,
            env={**base, "PYTHONPATH": str(ROOT)},
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        runs: dict[str, list[str]] = {"python -c pass": [sys.executable, "-c", "pass"]}
        envs: dict[str, dict[str, str]] = {"python -c pass": base}
        for tree in trees:
            label = "" if tree == ROOT else f" [{tree.name}]"
            for command in COMMANDS:
                name = "ingest " + " ".join(command) + label
                runs[name] = [sys.executable, "-m", "worker.cli.main", *command]
                envs[name] = {**base, "PYTHONPATH": str(tree)}
        for name, argv in runs.items():  # warm: bytecode written, files in the page cache
            timed(argv, cwd, envs[name])
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, argv in runs.items():
                times[name].append(timed(argv, cwd, envs[name]))
    print(f"{'command':<40} {'median s':>9} {'best s':>7}")
    for name, values in times.items():
        print(f"{name:<40} {statistics.median(values):>9.3f} {min(values):>7.3f}")


if __name__ == "__main__":
    main()

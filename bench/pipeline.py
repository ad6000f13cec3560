"""Benchmark: the whole pipeline through real workers, on the shared corpus.

Real Postgres (a database of its own) and Redis (a reserved database), Celery workers as
subprocesses (`cpu` queue: prefork with 1 or 2 processes; `io` queue: one process, threads,
because local Qdrant locks its folder to one process), local Qdrant, and the OpenAI stand-in
with zero latency. Every corpus file is submitted at once; the clock stops when the last one
has left the pipeline. Stage shares come from the versions' stage timestamps. The chunker
alone, on the same files in this process, is the yardstick.

    uv run python bench/pipeline.py [--write]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from bench.report import write_section  # noqa: E402
from shared import ingest  # noqa: E402
from shared import repository as repo  # noqa: E402
from shared.db import transaction  # noqa: E402
from shared.migrate import upgrade  # noqa: E402
from shared.models import DocumentVersion  # noqa: E402
from shared.pipeline.chunk import chunk_markdown  # noqa: E402
from shared.pipeline.convert import convert, detect_media_type  # noqa: E402
from shared.settings import get_settings  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.services import reserved_redis_database, temporary_postgres_database  # noqa: E402
from tests.workers import celery_worker, wait_for  # noqa: E402

STAGES = [
    ("queue wait", "received_at", "converting_at"),
    ("convert", "converting_at", "chunking_at"),
    ("chunk", "chunking_at", "embedding_at"),
    ("embed", "embedding_at", "upserting_at"),
    ("upsert + finalize", "upserting_at", "finished_at"),
]


def corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.md"))


def chunker_alone(files: list[Path]) -> tuple[float, int]:
    """Seconds to convert and chunk every file in this process, and the chunk count."""
    data = [path.read_bytes() for path in files]
    chunk_markdown("# warm up\n\ntext")
    started = time.perf_counter()
    chunks = 0
    for path, content in zip(files, data, strict=True):
        converted = convert(content, detect_media_type(content, path.name), path.name)
        chunks += len(chunk_markdown(converted.markdown))
    return time.perf_counter() - started, chunks


def run_once(cpu_processes: int, files: list[Path], qdrant: str) -> dict[str, object]:
    with (
        temporary_postgres_database() as db_url,
        reserved_redis_database() as redis_url,
        FakeOpenAI() as fake,
        tempfile.TemporaryDirectory() as tmp,
    ):
        env = {
            "DATABASE_URL": db_url,
            "REDIS_URL": redis_url,
            "QDRANT_PATH": qdrant if qdrant == ":memory:" else f"{tmp}/qdrant",
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": fake.base_url,
            "EMBEDDING_DIMENSIONS": "1536",
        }
        os.environ.update(env)
        get_settings.cache_clear()
        from worker.app import app, configure
        from worker.chain import enqueue_version

        configure(app, get_settings())
        upgrade(db_url)
        logs = Path(tmp)
        with (
            celery_worker(env, logs, queues="cpu", concurrency=cpu_processes, pool="prefork"),
            celery_worker(env, logs, queues="io", concurrency=4, pool="threads"),
        ):
            started = time.perf_counter()
            ids = []
            for path in files:
                data = path.read_bytes()
                new = repo.NewVersion(
                    source="bench",
                    external_id=path.name,
                    content=data,
                    sha256=ingest.sha256(data),
                    media_type="text/markdown",
                    filename=path.name,
                )
                ids.append(ingest.submit(new, enqueue_version).version_id)

            def finished() -> bool:
                with transaction() as session:
                    waiting = session.scalar(
                        sa.select(sa.func.count()).where(
                            DocumentVersion.id.in_(ids), DocumentVersion.finished_at.is_(None)
                        )
                    )
                return waiting == 0

            wait_for(finished, timeout=900, interval=0.2, what="the corpus to be indexed")
            elapsed = time.perf_counter() - started
        with transaction() as session:
            versions = repo.versions_by_id(session, ids)
        statuses = {str(v.status) for v in versions}
        shares = {
            name: sum((getattr(v, end) - getattr(v, start)).total_seconds() for v in versions)
            for name, start, end in STAGES
        }
        return {
            "cpu": cpu_processes,
            "elapsed": elapsed,
            "documents": len(versions),
            "statuses": statuses,
            "tokens": sum(v.tokens_spent for v in versions),
            "chunks": sum(v.chunk_count or 0 for v in versions),
            "requests": len(fake.requests),
            "shares": shares,
            "latency": statistics.median(
                (v.finished_at - v.received_at).total_seconds() for v in versions
            ),
        }


def render(runs: list[dict[str, object]], alone: float, chunks: int, size_mb: float) -> str:
    lines = [
        "## Pipeline",
        "",
        f"`uv run python bench/pipeline.py --write`: the 162 corpus files ({size_mb:.2f} MB) "
        "submitted at once through real workers (Redis, Postgres, local Qdrant, zero-latency "
        "OpenAI stand-in); `cpu` queue with prefork, `io` queue with one 4-thread process.",
        "",
        "| cpu worker processes | documents/s | tokens/s | chunks | requests | wall s | "
        "median time in pipeline s |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        lines.append(
            f"| {run['cpu']} | {run['documents'] / run['elapsed']:.1f} | "
            f"{run['tokens'] / run['elapsed']:,.0f} | {run['chunks']} | {run['requests']} | "
            f"{run['elapsed']:.1f} | {run['latency']:.2f} |"
        )
    documents = int(runs[0]["documents"])  # type: ignore[call-overload]
    lines += [
        "",
        f"The chunker alone (convert + chunk in one process): {documents / alone:.1f} "
        f"documents/s ({alone:.2f} s for {chunks} chunks).",
        "",
        "Share of the versions' time in each stage (sum over documents, from stage timestamps):",
        "",
        "| stage | " + " | ".join(f"{run['cpu']} cpu" for run in runs) + " |",
        "|---|" + "---:|" * len(runs),
    ]
    for name, _, _ in STAGES:
        cells = []
        for run in runs:
            shares = run["shares"]
            total = sum(shares.values()) or 1
            cells.append(f"{100 * shares[name] / total:.0f} %")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument(
        "--qdrant",
        choices=["disk", ":memory:"],
        default="disk",
        help="local Qdrant on disk (the embedded default) or in memory (no persistence cost)",
    )
    args = parser.parse_args()
    files = corpus_files()
    size_mb = sum(p.stat().st_size for p in files) / 1e6
    alone, chunks = chunker_alone(files)
    runs = [run_once(n, files, args.qdrant) for n in (1, 2)]
    for run in runs:
        assert run["statuses"] == {"indexed"}, run["statuses"]
    section = render(runs, alone, chunks, size_mb)
    print(section)
    if args.write:
        write_section("Pipeline", section)


if __name__ == "__main__":
    main()

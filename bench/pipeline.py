"""Benchmark: the whole pipeline through real workers, on the shared corpus.

Real Postgres (a database of its own) and Redis (a reserved database), Celery workers as
subprocesses (`cpu` queue: prefork with 1 or 2 processes; `io` queue: one process, threads,
because local Qdrant locks its folder to one process), local Qdrant, and the OpenAI stand-in
(`--latency-ms`, `--tpm`: it answers 429 beyond that budget). Every corpus file is submitted
at once (`--copies N`: N renamed copies, every heading changed so no embedding input repeats),
one upload per page as a CMS webhook sends them, or `--files-per-upload N` as uploads of N
files, from one client or `--submitters N` at once;
the clock stops when the last one has left the pipeline. Stage shares come from the versions'
stage timestamps; Postgres transactions per page from `pg_stat_database` (the run's own
database: uploads, workers, pre-pings; the benchmark's own polling subtracted). The chunker
alone, on the same files in this process, is the yardstick.

`embedded` times whole commands instead, side by side in alternating rounds on one stand-in:
`ingest run` (the embedded default) against LlamaIndex's IngestionPipeline
(`bench/llamaindex_ingest.py`).

    uv run --group dev python bench/pipeline.py [celery] [--latency-ms 0] [--tpm N] [--copies 1]
        [--files-per-upload 1] [--submitters 1]
    uv run --group dev python bench/pipeline.py embedded [--latency-ms 300] [--rounds 3]
        [--ingest LABEL=PATH/bin/ingest] ...
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("BENCH_CORPUS") or ROOT.parent / "shared" / "corpus")
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from shared import documents, ingest  # noqa: E402
from shared import repository as repo  # noqa: E402
from shared.db import transaction  # noqa: E402
from shared.migrate import upgrade  # noqa: E402
from shared.models import DocumentVersion, Event  # noqa: E402
from shared.pipeline.chunk import chunk_markdown  # noqa: E402
from shared.pipeline.convert import convert, detect_media_type  # noqa: E402
from shared.settings import get_settings  # noqa: E402
from shared.tokens import count_tokens  # noqa: E402
from tests.support.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.support.private_services import chosen_services  # noqa: E402
from tests.support.services import reserved_redis_database, temporary_postgres_database  # noqa: E402
from tests.support.workers import celery_worker, wait_for  # noqa: E402

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


def copy_of(text: str, number: int) -> str:
    """Copy `number` of a page: every heading changed, so no embedding input repeats."""
    if number == 0:
        return text
    return re.sub(r"^(#{1,6} .*?)\s*$", rf"\1 (copy {number})", text, flags=re.M)


def transactions(db_url: str) -> int:
    """Transactions committed or rolled back in the database so far."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT pg_stat_force_next_flush()"))
            conn.execute(sa.text("SELECT pg_stat_clear_snapshot()"))
            return int(
                conn.execute(
                    sa.text(
                        "SELECT xact_commit + xact_rollback FROM pg_stat_database "
                        "WHERE datname = current_database()"
                    )
                ).scalar_one()
            )
    finally:
        engine.dispose()


def run_once(
    cpu_processes: int,
    files: list[Path],
    qdrant: str,
    *,
    latency_ms: int = 0,
    tpm: int | None = None,
    copies: int = 1,
    per_upload: int = 1,
    submitters: int = 1,
) -> dict[str, object]:
    with (
        chosen_services() as services,
        temporary_postgres_database(services.postgres_admin_url()) as db_url,
        reserved_redis_database(services.redis_server_url()) as redis_url,
        FakeOpenAI(latency=latency_ms / 1000, tokens_per_minute=tpm) as fake,
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
            "EMBEDDING_TOKENS_PER_MINUTE": str(tpm or 1_000_000),
        }
        os.environ.update(env)
        get_settings.cache_clear()
        from worker.app import app, configure
        from worker.enqueue import enqueue_new

        configure(app, get_settings())
        upgrade(db_url)
        logs = Path(os.environ.get("BENCH_LOGS") or tmp)
        pages = [
            (f"{number}-{path.name}", copy_of(path.read_text(encoding="utf-8"), number).encode())
            for number in range(copies)
            for path in files
        ]
        polls = 0
        with (
            celery_worker(env, logs, queues="cpu", concurrency=cpu_processes, pool="prefork"),
            celery_worker(env, logs, queues="io", concurrency=4, pool="threads"),
        ):
            before = transactions(db_url)
            started = time.perf_counter()
            ids = []
            news = [
                documents.NewVersion(
                    source="bench",
                    external_id=name,
                    content=data,
                    sha256=documents.sha256(data),
                    media_type="text/markdown",
                    filename=name,
                )
                for name, data in pages
            ]
            uploads = [news[at : at + per_upload] for at in range(0, len(news), per_upload)]
            # As the API's uploads (one transaction registers an upload's files), from
            # `submitters` clients at once (a CMS sends its webhooks in parallel).
            with ThreadPoolExecutor(max_workers=submitters) as pool:
                for done in pool.map(lambda some: ingest.submit_many(some, enqueue_new), uploads):
                    ids += [registered.version_id for registered in done]
            submitted = time.perf_counter() - started

            def finished() -> bool:
                nonlocal polls
                polls += 1
                with transaction() as session:
                    waiting = session.scalar(
                        sa.select(sa.func.count()).where(
                            DocumentVersion.id.in_(ids), DocumentVersion.finished_at.is_(None)
                        )
                    )
                return waiting == 0

            wait_for(finished, timeout=3600, interval=0.2, what="the corpus to be indexed")
            elapsed = time.perf_counter() - started
        with transaction() as session:
            versions = repo.versions_by_id(session, ids)
            tasks_per_stage = dict(
                session.execute(
                    sa.select(Event.from_status, sa.func.count(sa.distinct(Event.actor)))
                    .where(Event.version_id.in_(ids), Event.from_status.is_not(None))
                    .group_by(Event.from_status)
                ).all()
            )
        from shared.db import engine

        engine().dispose()
        spent = transactions(db_url) - before - polls - 1
        statuses = {str(v.status) for v in versions}
        shares = {
            name: sum((getattr(v, end) - getattr(v, start)).total_seconds() for v in versions)
            for name, start, end in STAGES
        }
        answered = [r for r in fake.requests if r.status == 200]
        return {
            "cpu": cpu_processes,
            "latency_ms": latency_ms,
            "tpm": tpm,
            "elapsed": elapsed,
            "submitted": submitted,
            "documents": len(versions),
            "statuses": statuses,
            "tokens": sum(v.tokens_spent for v in versions),
            "chunks": sum(v.chunk_count or 0 for v in versions),
            "requests": len(answered),
            "rate_limited": sum(1 for r in fake.requests if r.status == 429),
            "transactions": spent,
            # pages per task of each stage (a task moves its pages out of the stage under its
            # own name: the events' actor)
            "batch": {
                stage: len(versions) / max(tasks_per_stage.get(stage, 0), 1)
                for stage in ("received", "chunking", "embedding", "upserting")
            },
            "shares": shares,
            "latency": statistics.median(
                (v.finished_at - v.received_at).total_seconds() for v in versions
            ),
        }


def render(runs: list[dict[str, object]], alone: float, chunks: int, size_mb: float) -> str:
    lines = [
        "| cpu worker processes | stand-in latency ms | TPM budget | documents | documents/s | "
        "tokens/s | share of budget (tokens/min) | share of what the budget allowed | 429s | "
        "requests | requests per page | requests per "
        "1,000 chunks | transactions per page | pages per task: convert, chunk, embed, "
        "finalize | wall s (of which submitting) | median time in pipeline s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for run in runs:
        documents, chunks_run = int(run["documents"]), int(run["chunks"])  # type: ignore[call-overload]
        elapsed, tokens = float(run["elapsed"]), int(run["tokens"])  # type: ignore[arg-type, call-overload]
        tpm = run["tpm"]
        share = f"{tokens / elapsed * 60 / tpm:.2f}" if tpm else "-"  # type: ignore[operator]
        # The stand-in's bucket starts full (as the API's): in `elapsed` it allows one
        # minute's budget plus what refills meanwhile. Above 1.0 by tokens/min is that start.
        allowed = f"{tokens / (tpm * (1 + elapsed / 60)):.2f}" if tpm else "-"  # type: ignore[operator]
        lines.append(
            f"| {run['cpu']} | {run['latency_ms']} | {tpm or '-'} | {documents} | "
            f"{documents / elapsed:.1f} | {tokens / elapsed:,.0f} | {share} | {allowed} | "
            f"{run['rate_limited']} | {run['requests']} | "
            f"{int(run['requests']) / documents:.2f} | "  # type: ignore[call-overload]
            f"{1000 * int(run['requests']) / max(chunks_run, 1):.1f} | "  # type: ignore[call-overload]
            f"{int(run['transactions']) / documents:.1f} | "  # type: ignore[call-overload]
            f"{', '.join(f'{b:.1f}' for b in run['batch'].values())} | "  # type: ignore[attr-defined]
            f"{elapsed:.1f} ({run['submitted']:.1f}) | "
            f"{run['latency']:.2f} |"
        )
    lines += [
        "",
        f"The chunker alone (convert + chunk in one process, {size_mb:.2f} MB): "
        f"{len(corpus_files()) / alone:.1f} documents/s ({alone:.2f} s for {chunks} chunks).",
        "",
        "Share of the versions' time in each stage (sum over documents, from stage timestamps; "
        "a stage's share includes the wait for its task in the queue):",
        "",
        "| stage | "
        + " | ".join(f"{run['cpu']} cpu, {run['latency_ms']} ms" for run in runs)
        + " |",
        "|---|" + "---:|" * len(runs),
    ]
    for name, _, _ in STAGES:
        cells = []
        for run in runs:
            shares = run["shares"]
            total = sum(shares.values()) or 1  # type: ignore[attr-defined]
            cells.append(f"{100 * shares[name] / total:.0f} %")  # type: ignore[index]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# --- embedded default against LlamaIndex, whole commands ------------------------------------


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without the service settings the Celery runs put in it."""
    dropped = {"DATABASE_URL", "REDIS_URL", "QDRANT_PATH", "QDRANT_URL", "EMBEDDING_DIMENSIONS"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    return {**env, **extra}


def timed(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, cpu


def compiled(*folders: Path) -> None:
    """Byte-compile `folders` once: an installed package has its bytecode (pip, the image's
    UV_COMPILE_BYTECODE), and without it (PYTHONDONTWRITEBYTECODE) every command would
    compile ~1,000 modules from source, seconds that are no contender's."""
    for folder in folders:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "-j", "0", str(folder)],
            capture_output=True,
            check=False,
        )


def embedded_rounds(
    latency_ms: int, rounds: int, ingests: dict[str, Path]
) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU seconds of each contender per round, the order rotating, on one
    stand-in: `ingests` names `ingest` executables (this tree's, an installed one, the base's)."""
    llama_cmd = [sys.executable, str(ROOT / "bench" / "llamaindex_ingest.py"), str(CORPUS)]
    names = [*ingests, "LlamaIndex"]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    with FakeOpenAI(latency=latency_ms / 1000) as fake:
        env = _clean_env(
            EMBEDDING_PROVIDER="openai",
            OPENAI_API_KEY="sk-bench",
            OPENAI_BASE_URL=fake.base_url,
        )
        for number in range(rounds):
            turn = number % len(names)
            for name in names[turn:] + names[:turn]:
                with tempfile.TemporaryDirectory() as tmp:
                    if name == "LlamaIndex":
                        command = [*llama_cmd, f"{tmp}/q"]
                    else:
                        command = [str(ingests[name]), "run", str(CORPUS)]
                    times[name].append(timed(command, env, tmp))
    return times


def render_embedded(results: dict[int, dict[str, list[tuple[float, float]]]], tokens: int) -> str:
    lines = [
        "| stand-in latency ms | contender | median wall s (whole command) | median CPU s | "
        "corpus tokens/s | ratio to LlamaIndex (wall) | ratio (CPU) |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for latency, times in results.items():
        llama = statistics.median(wall for wall, _ in times["LlamaIndex"])
        llama_cpu = statistics.median(cpu for _, cpu in times["LlamaIndex"])
        for name, values in times.items():
            wall = statistics.median(w for w, _ in values)
            cpu = statistics.median(c for _, c in values)
            lines.append(
                f"| {latency} | {name} | {wall:.1f} | {cpu:.1f} | {tokens / wall:,.0f} | "
                f"{llama / wall:.2f}x | {llama_cpu / cpu:.2f}x |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=["celery", "embedded"], default="celery")
    parser.add_argument("--latency-ms", type=int, nargs="+", default=None)
    parser.add_argument("--tpm", type=int, default=None, help="the stand-in's token budget")
    parser.add_argument("--copies", type=int, default=1, help="corpus copies (celery)")
    parser.add_argument(
        "--files-per-upload",
        type=int,
        default=1,
        help="pages registered per transaction, as one API upload of that many files (celery)",
    )
    parser.add_argument(
        "--submitters", type=int, default=1, help="clients uploading at once (celery)"
    )
    parser.add_argument("--cpu", type=int, nargs="+", default=[2], help="cpu worker processes")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (embedded)")
    parser.add_argument(
        "--ingest",
        action="append",
        metavar="LABEL=PATH",
        help="an `ingest` executable to time (embedded; repeatable; default: this tree's "
        "virtualenv). An installed one, as a site has it: UV_PROJECT_ENVIRONMENT=DIR uv sync "
        "--frozen --no-dev --no-editable --compile-bytecode (without the bench group's "
        "aiohttp, which the openai SDK imports when it is there)",
    )
    parser.add_argument(
        "--qdrant",
        choices=["disk", ":memory:"],
        default="disk",
        help="local Qdrant on disk (the embedded default) or in memory (no persistence cost)",
    )
    args = parser.parse_args()
    files = corpus_files()
    if args.mode == "embedded":
        tokens = sum(count_tokens(p.read_text(encoding="utf-8")) for p in files)
        ingests = dict(spec.split("=", 1) for spec in args.ingest or [])
        contenders = {label: Path(path) for label, path in ingests.items()} or {
            "ingest run": ROOT / ".venv" / "bin" / "ingest"
        }
        site = Path(sys.executable).parents[1] / "lib"
        compiled(site, *{path.parents[1] / "lib" for path in contenders.values()})
        results = {
            ms: embedded_rounds(ms, args.rounds, contenders) for ms in args.latency_ms or [0, 300]
        }
        print(results)
        print(render_embedded(results, tokens))
        return
    size_mb = sum(p.stat().st_size for p in files) / 1e6
    alone, chunks = chunker_alone(files)
    runs = [
        run_once(
            n,
            files,
            args.qdrant,
            latency_ms=ms,
            tpm=args.tpm,
            copies=args.copies,
            per_upload=args.files_per_upload,
            submitters=args.submitters,
        )
        for ms in args.latency_ms or [0]
        for n in args.cpu
    ]
    for run in runs:
        assert run["statuses"] == {"indexed"}, run["statuses"]
    print(render(runs, alone, chunks, size_mb))


if __name__ == "__main__":
    main()

"""Benchmark: 500 small Markdown uploads from 50 concurrent clients over loopback.

Starts everything for real: a Postgres database of its own (migrated), a reserved Redis
database, the OpenAI stand-in, one Celery worker subprocess (local Qdrant) and the API with
`ingest api` in a subprocess. Then: all uploads must answer 202, p50/p99 upload latency, and
every version must reach `indexed` (none lost), with the time that took.

    uv run --group dev python bench/api.py [--uploads 500] [--clients 50] [--worker-threads 4] \
        [--api-workers 1]
"""

from __future__ import annotations

import argparse
import asyncio
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
import sqlalchemy as sa

from shared.migrate import upgrade
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.private_services import chosen_services
from tests.support.services import reserved_redis_database, temporary_postgres_database
from tests.support.workers import celery_worker, wait_for

API_KEY = "bench-key-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def page(number: int) -> bytes:
    return (
        f"# Pagina {number}\n\n## Voorbereiding\n\nNeem uw identiteitskaart en de lijst met "
        f"medicijnen mee naar afspraak {number}. Kom een kwartier voor de afgesproken tijd.\n\n"
        "## Na afloop\n\nBel de afdeling bij koorts of als de pijn toeneemt.\n"
    ).encode()


async def upload_all(base: str, uploads: int, clients: int) -> tuple[list[float], list[int]]:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for number in range(uploads):
        queue.put_nowait(number)
    latencies: list[float] = []
    statuses: list[int] = []
    headers = {"Authorization": f"Bearer {API_KEY}"}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as http:

        async def client() -> None:
            while not queue.empty():
                number = queue.get_nowait()
                files = {"file": (f"page-{number}.md", page(number), "text/markdown")}
                started = time.perf_counter()
                response = await http.post("/v1/documents", files=files)
                latencies.append(time.perf_counter() - started)
                statuses.append(response.status_code)

        await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, statuses


def count_by_status(url: str) -> dict[str, int]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text("SELECT status, count(*) FROM document_versions GROUP BY status")
            ).all()
    finally:
        engine.dispose()
    return {str(status): int(n) for status, n in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=500)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--worker-threads", type=int, default=4)
    parser.add_argument("--api-workers", type=int, default=1, help="uvicorn processes")
    parser.add_argument("--index-timeout", type=float, default=600)
    args = parser.parse_args()

    with (
        chosen_services() as services,
        temporary_postgres_database(services.postgres_admin_url()) as database_url,
        reserved_redis_database(services.redis_server_url()) as redis_url,
        FakeOpenAI() as fake,
        tempfile.TemporaryDirectory() as tmp,
    ):
        upgrade(database_url)
        port = free_port()
        env = {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "QDRANT_PATH": str(Path(tmp) / "qdrant"),
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": fake.base_url,
            "EMBEDDING_DIMENSIONS": "256",
            "API_KEYS": f"bench:{API_KEY}",
            "LOG_LEVEL": "WARNING",
        }
        api_log = open(Path(tmp) / "api.log", "wb")  # noqa: SIM115
        api = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "ingest"),
                "api",
                "--port",
                str(port),
                "--workers",
                str(args.api_workers),
            ],
            cwd=ROOT,
            # Beside Celery workers `ingest api` wants a Qdrant server (`shared.layout`): there
            # is none here, and this API only takes uploads (the worker indexes into local
            # Qdrant), so it is named one it never calls, on a closed loopback port.
            env={**os.environ, **env, "QDRANT_URL": "http://127.0.0.1:1"},
            stdout=api_log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: _ready(base), timeout=60, what="the API to be ready")
            with celery_worker(env, Path(tmp), concurrency=args.worker_threads):
                started = time.perf_counter()
                latencies, statuses = asyncio.run(upload_all(base, args.uploads, args.clients))
                upload_seconds = time.perf_counter() - started
                wait_for(
                    lambda: count_by_status(database_url).get("indexed", 0) >= args.uploads,
                    timeout=args.index_timeout,
                    interval=0.5,
                    what="every upload to be indexed",
                )
                indexed_seconds = time.perf_counter() - started
            final = count_by_status(database_url)
        finally:
            api.terminate()
            api.wait(timeout=30)
            api_log.close()

    accepted = statuses.count(202)
    print(f"uploads: {args.uploads} from {args.clients} concurrent clients (loopback)")
    print(f"202 Accepted: {accepted}/{args.uploads}; other: {sorted(set(statuses) - {202})}")
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    print(f"upload latency p50: {statistics.median(latencies) * 1000:.0f} ms")
    print(f"upload latency p99: {cuts[98] * 1000:.0f} ms; max {max(latencies) * 1000:.0f} ms")
    print(f"upload throughput: {args.uploads / upload_seconds:.0f} uploads/s")
    print(f"all indexed after: {indexed_seconds:.1f} s; final versions by status: {final}")
    if accepted != args.uploads or final.get("indexed", 0) != args.uploads:
        sys.exit("FAILED: not every upload was accepted and indexed")


def _ready(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()

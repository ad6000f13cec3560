"""Benchmark: embedding throughput against the OpenAI stand-in under a tokens-per-minute budget.

The stand-in runs as its own process (`python -m tests.support.fakes.openai_server`) with 300 ms of
latency per request and a budget of 1,000,000 tokens per minute, enforced like the API (a bucket
that starts full). The shared corpus is chunked and repeated to at least 2,000,000 tokens. Worker
threads, each with its own SDK client and Redis connection, take one document at a time and embed
its chunks, as the `ingest.embed` task does; they share the Redis rate limiter (the in-process one
when Redis is not reachable).

Reports: tokens per minute as a fraction of the budget (overall, and sustained once the initial
full bucket is spent), requests, and 429s received. Writes the `## Embeddings` section of
docs/benchmarks.md with `--write`.

    uv run --group dev python bench/embedding.py [--tokens 2000000] [--workers 8] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import redis  # noqa: E402

from bench.report import write_section  # noqa: E402
from shared.adapters.openai_embeddings import OpenAIEmbedder  # noqa: E402
from shared.pipeline.embed import embedding_input  # noqa: E402
from shared.ratelimit import LocalRateLimiter, RateLimiter, RedisRateLimiter  # noqa: E402
from shared.tokens import count_tokens, encoding  # noqa: E402

Document = list[str]  # the embedding inputs of one document's chunks


def simple_chunks(markdown: str, target: int = 350) -> list[tuple[list[str], str]]:
    """Fallback while `shared.pipeline.chunk` is not on this branch: paragraphs packed to ~350
    tokens under their nearest heading; an oversized paragraph is cut by tokens."""
    chunks: list[tuple[list[str], str]] = []
    heading: list[str] = []
    current: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal current, size
        if current:
            chunks.append((list(heading), "\n\n".join(current)))
        current, size = [], 0

    for block in re.split(r"\n\s*\n", markdown):
        block = block.strip()
        if not block:
            continue
        match = re.match(r"^(#{1,6})\s+(.*)", block)
        if match:
            flush()
            heading = [match.group(2).strip()]
        tokens = count_tokens(block)
        if tokens > target:
            flush()
            ids = encoding().encode(block, disallowed_special=())
            for start in range(0, len(ids), target):
                chunks.append((list(heading), encoding().decode(ids[start : start + target])))
            continue
        if size + tokens > target:
            flush()
        current.append(block)
        size += tokens
    flush()
    return chunks


def chunk_document(markdown: str) -> list[tuple[list[str], str]]:
    """The project's chunker when it is there, else the fallback above."""
    try:
        from shared.pipeline.chunk import chunk_markdown  # type: ignore[import-not-found]

        return [(list(c.headings), c.text) for c in chunk_markdown(markdown)]
    except (ImportError, TypeError, AttributeError):
        return simple_chunks(markdown)


def build_corpus(min_tokens: int) -> tuple[list[Document], int, str]:
    """Documents of embedding inputs, the corpus repeated until `min_tokens` is reached.

    Each copy carries its number in the heading line, so no input repeats (a repeated text
    would be embedded once, which is right in production but would flatter the benchmark)."""
    files = sorted(CORPUS.rglob("*.md"))
    files = [f for f in files if f.name != "README.md"]
    chunked = [chunk_document(f.read_text(encoding="utf-8")) for f in files]
    try:
        import shared.pipeline.chunk  # noqa: F401

        chunker = "shared.pipeline.chunk"
    except ImportError:
        chunker = "fallback paragraph packer (~350 tokens)"
    documents: list[Document] = []
    total = 0
    copy = 0
    while total < min_tokens:
        copy += 1
        for chunks in chunked:
            inputs = [embedding_input([f"Copy {copy}", *h], text) for h, text in chunks if text]
            if inputs:
                documents.append(inputs)
                total += sum(count_tokens(t) for t in inputs)
    return documents, total, chunker


def start_stand_in(latency: float, tpm: int) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "tests.support.fakes.openai_server", "--port", "0"]
    command += ["--latency", str(latency), "--tpm", str(tpm)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def make_limiter(tpm: int, rpm: int) -> tuple[RateLimiter, str, object]:
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    try:
        client = redis.Redis.from_url(url)
        client.ping()
    except redis.RedisError:
        return LocalRateLimiter(tpm, rpm), "in-process", None
    prefix = f"bench:ratelimit:{uuid.uuid4().hex}"
    return RedisRateLimiter(client, prefix, tpm, rpm), "Redis", (client, prefix)


def run(args: argparse.Namespace) -> dict[str, object]:
    documents, corpus_tokens, chunker = build_corpus(args.tokens)
    process, base_url = start_stand_in(args.latency, args.tpm)
    limiter, limiter_kind, cleanup = make_limiter(args.tpm, args.rpm)
    work: queue.Queue[Document] = queue.Queue()
    for document in documents:
        work.put(document)
    errors: list[str] = []
    done_tokens: list[int] = []

    def worker() -> None:
        embedder = OpenAIEmbedder(api_key="sk-bench", base_url=base_url, limiter=limiter)
        while True:
            try:
                document = work.get_nowait()
            except queue.Empty:
                return
            try:
                done_tokens.append(embedder.embed(document).tokens)
            except Exception as exc:  # report, keep going: a benchmark, not a test
                errors.append(f"{type(exc).__name__}: {exc}")

    try:
        started = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(args.workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/requests") as answer:
            log = json.load(answer)["requests"]
    finally:
        process.terminate()
        process.wait(timeout=10)
        if cleanup is not None:
            client, prefix = cleanup
            for key in client.scan_iter(f"{prefix}:*"):
                client.delete(key)

    accepted = sorted((r for r in log if r["status"] == 200), key=lambda r: r["at"])
    tokens = sum(r["tokens"] for r in accepted)
    sustained, window = sustained_rate(accepted, args.tpm)
    return {
        "chunker": chunker,
        "documents": len(documents),
        "inputs": sum(len(d) for d in documents),
        "corpus_tokens": corpus_tokens,
        "tokens_billed": tokens,
        "tokens_reported_by_client": sum(done_tokens),
        "seconds": elapsed,
        "overall_tpm": tokens / elapsed * 60,
        "sustained_tpm": sustained,
        "sustained_window": window,
        "requests": len(log),
        "status_429": sum(1 for r in log if r["status"] == 429),
        "errors": errors,
        "limiter": limiter_kind,
        "workers": args.workers,
        "latency": args.latency,
        "tpm": args.tpm,
    }


def sustained_rate(accepted: list[dict[str, float]], tpm: int) -> tuple[float, float]:
    """Tokens per minute once the API's initial full bucket is spent, and the window's seconds.

    The stand-in's bucket is replayed from its log; the window starts when it first falls below
    10% of a minute's budget (from then on the refill sets the pace) and runs to the end. The
    rate is the least-squares slope of the cumulative tokens over that window, so what was
    left in the bucket at its start does not inflate it."""
    level, last, start = float(tpm), accepted[0]["at"], None
    for index, request in enumerate(accepted):
        level = min(tpm, level + (request["at"] - last) * tpm / 60) - request["tokens"]
        last = request["at"]
        if level < 0.1 * tpm:
            start = index
            break
    if start is None or len(accepted) - start < 10:
        return float("nan"), 0.0
    window = accepted[start:]
    times = np.array([r["at"] for r in window])
    cumulative = np.cumsum([r["tokens"] for r in window])
    slope = np.polyfit(times - times[0], cumulative, 1)[0]
    return float(slope * 60), float(times[-1] - times[0])


def report(result: dict[str, object]) -> str:
    r = result
    budget = float(r["tpm"])  # type: ignore[arg-type]
    lines = [
        "## Embeddings",
        "",
        "`uv run --group dev python bench/embedding.py --write`: stand-in "
        f"(`tests/support/fakes/openai_server.py`, "
        f"its own process) with {float(r['latency']) * 1000:.0f} ms latency per request and a "  # type: ignore[arg-type]
        f"{budget:,.0f} tokens-per-minute budget enforced like the API (a bucket that starts "
        f"full); {r['workers']} worker threads, each with its own SDK client, one document per "
        f"`embed` call, sharing the {r['limiter']} rate limiter (95% headroom). Corpus: "
        f"`../shared/corpus` chunked with {r['chunker']}, repeated to {r['corpus_tokens']:,} "
        f"tokens ({r['inputs']:,} inputs in {r['documents']:,} documents).",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| tokens billed (usage) | {r['tokens_billed']:,} | |",
        f"| wall time | {float(r['seconds']):.1f} s | |",  # type: ignore[arg-type]
        f"| sustained tokens per minute, after the initial full bucket "
        f"({float(r['sustained_window']):.0f} s window) | "
        f"{float(r['sustained_tpm']):,.0f} ({float(r['sustained_tpm']) / budget:.3f} of the "  # type: ignore[arg-type]
        "budget) | >= 0.9 |",
        f"| overall tokens per minute (includes the initial full bucket) | "
        f"{float(r['overall_tpm']):,.0f} ({float(r['overall_tpm']) / budget:.3f}) | |",  # type: ignore[arg-type]
        f"| requests | {r['requests']:,} | |",
        f"| 429s received | {r['status_429']} | 0 |",
        f"| errors | {len(r['errors'])} | 0 |",  # type: ignore[arg-type]
        "",
        "The budget starts as a full bucket (as the API's does), so the first minute's tokens go "
        "out at once and the overall rate says little. The sustained rate is the slope of the "
        "tokens the stand-in accepted, from when its bucket fell below 10% of a minute's budget "
        "to the end: there the shared limiter alone sets the pace. It sits near the 95% headroom "
        "the limiter keeps on purpose, a margin for requests that reach the API out of order.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2_000_000, help="minimum corpus tokens")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--tpm", type=int, default=1_000_000)
    parser.add_argument("--rpm", type=int, default=3_000)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    result = run(args)
    section = report(result)
    print(section)
    for error in result["errors"][:5]:  # type: ignore[index]
        print("error:", error)
    if args.write:
        write_section("Embeddings", section)


if __name__ == "__main__":
    main()

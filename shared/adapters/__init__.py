"""Adapters to services and libraries outside the process.

- `openai_embeddings`: the OpenAI (or compatible) embeddings API behind the `Embedder` protocol
  of `shared.pipeline.embed`.
- `qdrant`: the vector index (`QdrantIndex`), on a server or in local mode; `qdrant_local`
  replaces slow parts of qdrant-client's local mode.
- `fetch`: downloading a CMS page a webhook names, within the allowed hosts and limits.
"""

"""Adapters to services outside the process: the embeddings API (and later Qdrant, blobs)."""

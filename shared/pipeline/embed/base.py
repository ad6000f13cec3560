"""The embedder interface: what text is embedded, what an embedder returns, how inputs fill
requests. The providers (`shared.adapters.openai_embeddings`, `hashing`) import this module and
nothing else of the package, so there is no import circle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from shared.errors import PermanentError

HEADING_SEPARATOR = " > "
SECTION_SEPARATOR = "; "


def embedding_input(
    headings: list[str], text: str, sections: Sequence[Mapping[str, Any]] = ()
) -> str:
    """The text sent for one chunk: its heading path as one line, then the chunk text.

    The heading line keeps short chunks in context ("Neem uw identiteitskaart mee" belongs to
    "Knieoperatie > Voorbereiding"), for the vector and for the reader. When the chunk covers
    more sections (its `sections`), their titles follow the path, so the vector names every
    topic the text holds: "Knieoperatie > Voorbereiding; Herstel".
    """
    path = HEADING_SEPARATOR.join(h.strip() for h in headings if h and h.strip())
    own = [h.strip() for h in headings]
    titles: list[str] = []
    for section in sections:
        names = [h.strip() for h in section.get("headings") or ()]
        if names and names != own and names[-1] and names[-1] not in titles:
            titles.append(names[-1])
    line = SECTION_SEPARATOR.join([path, *titles] if path else titles)
    return f"{line}\n{text}" if line else text


@dataclass
class EmbedResult:
    """Vectors in the order of the inputs, and what producing them cost.

    `tokens` are the billed tokens (the API's `usage`; the cl100k count for hashing), to be
    stored on the version. `requests` counts HTTP requests sent, retries included.
    """

    vectors: list[list[float]]
    tokens: int
    requests: int


class Embedder(Protocol):
    """Turns texts into vectors of a fixed dimension."""

    name: str
    model: str
    dimensions: int

    def embed(self, inputs: list[str]) -> EmbedResult:
        """Vectors for `inputs`, same order; raises PermanentError / TransientError."""
        ...


def embed_query(embedder: Embedder, query: str) -> EmbedResult:
    """A search question's vector: through the embedder's `embed_query` when it has one (e5
    embeds questions and passages with different prefixes), else like a chunk."""
    embed = getattr(embedder, "embed_query", None) or embedder.embed
    return embed([query])


def check_inputs(inputs: Sequence[str], token_counts: Sequence[int], max_input_tokens: int) -> None:
    """Refuse what the API would refuse, before paying for anything: empty or too long inputs."""
    for index, (text, tokens) in enumerate(zip(inputs, token_counts, strict=True)):
        if not text:
            raise PermanentError(
                f"Embedding input {index} is empty; the API refuses empty inputs.",
                code="empty_input",
            )
        if tokens > max_input_tokens:
            raise PermanentError(
                f"Embedding input {index} has {tokens} tokens, more than the model's limit of "
                f"{max_input_tokens}. The chunker should have split it; check the chunk settings.",
                code="input_too_long",
            )


def pack_batches(token_counts: Sequence[int], max_inputs: int, max_tokens: int) -> list[range]:
    """Consecutive index ranges that fill requests: at most `max_inputs` inputs and `max_tokens`.

    Greedy in input order, so every request but the last is full on one of the two limits.
    A single input over `max_tokens` must be refused beforehand (`check_inputs`).
    """
    if max_inputs < 1 or max_tokens < 1:
        raise ValueError("max_inputs and max_tokens must be positive")
    batches: list[range] = []
    start = 0
    tokens_in_batch = 0
    for index, tokens in enumerate(token_counts):
        if tokens > max_tokens:
            raise ValueError(f"input {index} has {tokens} tokens, more than {max_tokens}")
        full = index - start >= max_inputs or tokens_in_batch + tokens > max_tokens
        if full:
            batches.append(range(start, index))
            start, tokens_in_batch = index, 0
        tokens_in_batch += tokens
    if start < len(token_counts):
        batches.append(range(start, len(token_counts)))
    return batches

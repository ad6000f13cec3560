"""The offline embedder of the embedded default: lexical feature hashing, not for production.

Words (lower-cased) and word pairs are hashed into a fixed number of dimensions with a sign bit,
weighted by 1 + log(count), and the vector is L2-normalised. Texts that share words come out
close under cosine similarity, which is enough to demo search without an API key or the
internet. It knows nothing of meaning ("knie" and "knee" are unrelated to it), so production
uses OpenAI.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
import re
from collections import Counter

import numpy as np

from shared.pipeline.embed.base import EmbedResult, check_inputs
from shared.tokens import count_tokens

logger = logging.getLogger("shared.embed")

_WORD = re.compile(r"\w+", re.UNICODE)
_warned = False


def _features(text: str) -> Counter[str]:
    words = [w.lower() for w in _WORD.findall(text)]
    features = Counter(words)
    features.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    if not features and text.strip():
        features[text.strip()] = 1  # punctuation only: still a stable, non-zero vector
    return features


def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dimensions, (1.0 if value & 1 else -1.0)


class HashingEmbedder:
    """Deterministic lexical vectors; its name says so, and it logs once: not for production."""

    name = "hashing-lexical"
    model = "hashing-lexical-v1"

    def __init__(self, dimensions: int) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be positive")
        self.dimensions = dimensions
        global _warned
        if not _warned:
            _warned = True
            logger.warning(
                "Embedding with the hashing embedder (%d dimensions): lexical word matching, "
                "not for production. Set OPENAI_API_KEY to embed with OpenAI.",
                dimensions,
            )

    def vector(self, text: str) -> list[float]:
        """The L2-normalised vector of one text."""
        vector = np.zeros(self.dimensions, dtype=np.float64)
        for feature, count in _features(text).items():
            slot, sign = _slot(feature, self.dimensions)
            vector[slot] += sign * (1.0 + math.log(count))
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            vector /= norm
        return vector.tolist()

    def embed(self, inputs: list[str]) -> EmbedResult:
        # Same contract as the API: an empty input is a bug upstream, not a zero vector.
        check_inputs(inputs, [0] * len(inputs), max_input_tokens=1)
        vectors = [self.vector(text) for text in inputs]
        tokens = sum(count_tokens(text) for text in inputs)
        return EmbedResult(vectors=vectors, tokens=tokens, requests=0)

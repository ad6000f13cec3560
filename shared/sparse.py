"""Sparse lexical vectors: BM25-style term weights, so exact terms match (drug names, codes).

Dense embeddings blur rare words: "acenocoumarol" and "fenprocoumon" sit close to every other
anticoagulant. A sparse vector per chunk keeps the words themselves: lower-cased, accents
folded ("café" = "cafe"), stemmed with the Snowball stemmer of the document's language
(PyStemmer), each stem hashed to a 32-bit index. Its weight is BM25's term-frequency part,
`tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / AVERAGE_LENGTH))`; the IDF part is Qdrant's
(the collection's sparse vector has `modifier=idf`), so it follows the collection as it grows.

The query's language is not known, so its terms are stemmed with every supported stemmer and
all stems are sent (weight 1 each): the Dutch and the English stem of a word both find the
chunks whose language produced them.

Both sides use this module: the pipeline's indexing (a chunk's vector) and retrieval (a query's
vector), so it belongs to neither and imports neither.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import Stemmer

#: BM25 term-frequency saturation and length normalisation (the usual values).
K1 = 1.2
B = 0.75
#: Words in a typical chunk (about 350 tokens); fixed, so a chunk's vector never changes
#: when other chunks are added.
AVERAGE_LENGTH = 250.0

STEMMERS = {"nl": "dutch", "en": "english"}
DEFAULT_LANGUAGE = "nl"
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class SparseTerms:
    """A sparse vector: sorted unique indices and their weights."""

    indices: list[int]
    values: list[float]

    def __bool__(self) -> bool:
        return bool(self.indices)


def language_code(language: str | None) -> str:
    """`nl-NL`, `NL`, `nl` -> `nl`; unknown or missing -> the default (the hospital's Dutch)."""
    code = (language or "").strip().lower()[:2]
    return code if code in STEMMERS else DEFAULT_LANGUAGE


class _Stemmer(Protocol):
    """What we use of PyStemmer's `Stemmer.Stemmer` (a C extension without type stubs)."""

    def stemWords(self, words: Sequence[str], /) -> list[str]: ...


@lru_cache(maxsize=8)
def _stemmer(code: str) -> _Stemmer:
    stemmer: _Stemmer = Stemmer.Stemmer(STEMMERS[code])
    return stemmer


def fold(text: str) -> str:
    """Lower-case and strip accents: `Crème Brûlée` -> `creme brulee`."""
    if text.isascii():  # nothing to decompose, no combining mark: most sentences
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(fold(text)) if not w.isdigit() or len(w) > 1]


def stems(text: str, language: str | None) -> list[str]:
    return _stemmer(language_code(language)).stemWords(words(text))


def stems_in_every_language(text: str) -> set[str]:
    """The stems of `text` under every supported stemmer (the words are folded once)."""
    found = words(text)
    return {stem for code in STEMMERS for stem in _stemmer(code).stemWords(found)}


def term_index(term: str) -> int:
    """A stable 32-bit index per term (CRC-32: fast, and collisions are rare and harmless)."""
    return zlib.crc32(term.encode("utf-8"))


def _vector(weights: dict[int, float]) -> SparseTerms:
    indices = sorted(weights)
    return SparseTerms(indices, [weights[i] for i in indices])


def document_vector(text: str, language: str | None) -> SparseTerms:
    """BM25 term-frequency weights of one chunk's terms (heading path included by the caller)."""
    terms = stems(text, language) or [fold(text).strip() or "\u2205"]  # never empty: verify
    norm = K1 * (1 - B + B * len(terms) / AVERAGE_LENGTH)
    weights: dict[int, float] = {}
    for term, tf in Counter(terms).items():
        index = term_index(term)
        weights[index] = weights.get(index, 0.0) + tf * (K1 + 1) / (tf + norm)
    return _vector(weights)


def query_vector(text: str, languages: Iterable[str] | None = None) -> SparseTerms:
    """The query's stems in each language (default: all supported), weight 1 each."""
    codes = {language_code(code) for code in languages} if languages else set(STEMMERS)
    weights: dict[int, float] = {}
    for code in sorted(codes):
        for term in stems(text, code):
            weights[term_index(term)] = 1.0
    return _vector(weights)

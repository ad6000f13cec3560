"""The one tokenizer of the project: tiktoken `cl100k_base`, the encoding of OpenAI's
embedding models, so chunk sizes are counted as the API bills them.

tiktoken downloads its vocabulary on first use; where there is no internet, set
`TIKTOKEN_CACHE_DIR` to a folder holding the cached file (see the README).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

import tiktoken

from shared.errors import TransientError
from shared.settings import get_settings

ENCODING_NAME = "cl100k_base"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The shared encoder; loading it costs a few hundred milliseconds, so it is cached."""
    cache = get_settings().tiktoken_cache_dir
    if cache:  # tiktoken itself reads only the environment
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", cache)
    try:
        return tiktoken.get_encoding(ENCODING_NAME)
    except Exception as exc:  # tiktoken raises requests' errors when it cannot download
        raise TransientError(
            "tiktoken could not load its cl100k_base vocabulary (no internet here?). Set "
            "TIKTOKEN_CACHE_DIR to a folder holding the cached file; see the README, "
            "'Air-gapped tiktoken'.",
            code="tokenizer_unavailable",
        ) from exc


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (special-token text is counted as plain text)."""
    return len(encoding().encode(text, disallowed_special=()))


def encode_all(texts: Sequence[str]) -> list[list[int]]:
    """The tokens of each text (special-token text as plain text). tiktoken's `encode_batch`
    starts a thread pool on every call: for one text (a search's question) that is 0.3 ms,
    up to 4 ms when the cores are busy, so one text is encoded directly."""
    if len(texts) == 1:
        return [encoding().encode(texts[0], disallowed_special=())]
    return encoding().encode_batch(list(texts), disallowed_special=())

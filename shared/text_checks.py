"""Text and JSON a request may carry into Postgres, JSON columns and the embedding API.

Postgres text cannot hold NUL (`\\x00`), UTF-8 cannot encode a lone surrogate (`"\\ud800"`
in JSON), JSONB has no NaN or Infinity, and Python refuses integers of more than 4,300 digits:
each was a 500 from deep inside a request. They are refused where they enter, with a message
naming the field (the API's 422).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


class FieldError(ValueError):
    """A value that cannot be stored; the message names the field and what is wrong."""


def check_text(value: str | None, field: str) -> str | None:
    """`value` unchanged, or a FieldError for a NUL character or a lone surrogate."""
    if value is not None:
        found = _BAD_CHARS.search(value)
        if found:
            what = "a NUL character" if found.group() == "\x00" else "an unpaired surrogate"
            raise FieldError(
                f"{field} contains {what} (position {found.start()}), which no text may hold."
            )
    return value


def _no_constant(name: str) -> Any:
    raise FieldError(f"{name} is not a number JSON allows; use a string or leave it out.")


def load_json(raw: str, field: str) -> Any:
    """`json.loads` that refuses NaN, Infinity, numbers too large to store and strings with
    NUL or lone surrogates (FieldError); JSONDecodeError and RecursionError pass through."""
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except FieldError as exc:
        raise FieldError(f"{field}: {exc}") from None
    except ValueError as exc:  # an integer beyond Python's 4,300-digit limit
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise FieldError(f"{field} holds a number too large to store.") from None
    check_json(value, field)
    return value


def check_json(value: Any, field: str) -> None:
    """FieldError for a non-finite or out-of-range number or a bad string anywhere in
    `value` (walked without recursion)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                check_text(str(key), field)
                pending.append(child)
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            check_text(item, field)
        elif isinstance(item, float) and not math.isfinite(item):
            raise FieldError(f"{field} holds a number too large to store (or NaN).")
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) >= 10**100:
            raise FieldError(f"{field} holds a number too large to store.")

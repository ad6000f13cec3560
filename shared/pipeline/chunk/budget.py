"""A CPU-time budget for chunking one document (`CHUNK_CPU_SECONDS`).

The chunker is linear in its input (bench/chunk_shapes.py), but linear in a large,
pathological input can still be minutes. `chunk_markdown` opens a budget and its loops call
`check()` between blocks, pieces and chunks, so a document that uses up its budget ends in a
typed `too_complex` failure instead of a task killed at its time limit. Time is the thread's
CPU time (`time.thread_time`): a busy neighbour on a shared machine, or the embedding thread of
a local run, does not count against it. `check()` costs well under a microsecond.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from shared.errors import TooComplexError

# (CPU time at which the budget runs out, the budget in seconds); None: no budget.
_BUDGET: ContextVar[tuple[float, float] | None] = ContextVar("chunk_cpu_budget", default=None)


@contextmanager
def cpu_budget(seconds: float | None) -> Iterator[None]:
    """Chunking inside the block may use `seconds` of this thread's CPU (None or 0: no limit)."""
    token = _BUDGET.set((time.thread_time() + seconds, seconds) if seconds else None)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def check() -> None:
    """Raise `TooComplexError` when the current budget is used up."""
    budget = _BUDGET.get()
    if budget is not None and time.thread_time() > budget[0]:
        raise TooComplexError(
            f"Cutting this document into chunks took more than the limit of {budget[1]:g} "
            "seconds of processing time: its text is unusually large or complex (a very "
            "long table, list or line, deep nesting). Split it into smaller documents, or "
            "remove the part that is not meant for readers, and upload it again."
        )

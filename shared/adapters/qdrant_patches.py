"""The one place that patches qdrant-client: local mode's slow parts replaced for the process.

A patch changes the library for every client in the process, so it is installed here only,
explicitly, by whoever makes a local-mode client (`shared.adapters.qdrant.local_client`), and
never as a side effect of making an index. The stand-ins (`shared.adapters.qdrant_local`)
return what qdrant-client 1.20's local mode returns, faster; a Qdrant server never reaches
them. `install()` is idempotent; `uninstall()` and `loop_only()` are for the tests that
compare the two.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from shared.adapters.qdrant_local import PATCHES

_lock = threading.Lock()
_installed = False


def install() -> None:
    """Score plain sparse searches of every local collection from postings, keep filters'
    answers, use plain vector queries without copying them. Installing twice is harmless."""
    global _installed
    with _lock:
        if _installed:
            return
        for owner, attribute, _, ours in PATCHES:
            setattr(owner, attribute, ours)
        _installed = True


def uninstall() -> None:
    """qdrant-client's own local mode again."""
    global _installed
    with _lock:
        for owner, attribute, theirs, _ in PATCHES:
            setattr(owner, attribute, theirs)
        _installed = False


@contextlib.contextmanager
def loop_only() -> Iterator[None]:
    """qdrant-client's own local mode for the duration, then as it was (tests compare the two)."""
    was = _installed
    uninstall()
    try:
        yield
    finally:
        if was:
            install()

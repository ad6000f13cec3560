"""The wiring's cache closes the indexes it drops: an embedded shard unlocks its folder for
the next process (the tests open many folders, one settings object each)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from shared.pipeline import wiring
from shared.settings import Settings


def opened_elsewhere(folder: Path) -> str:
    """What another process gets when it opens the collection `c` under `folder`."""
    code = (
        "from shared.adapters.qdrant_edge import EdgeIndex\n"
        "from shared.errors import StoreLockedError\n"
        f"index = EdgeIndex.open({str(folder)!r}, 'c', 8)\n"
        "try:\n    print(index.count())\nexcept StoreLockedError as exc:\n    print(exc.code)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return run.stdout.strip()


def test_indexes_dropped_from_the_cache_are_closed(tmp_path: Path) -> None:
    first = Settings(_env_file=None, qdrant_path=str(tmp_path / "a"), embedding_dimensions=8)  # type: ignore[call-arg]
    index = wiring.index_for(first, wiring.embedder(first), "c")
    index.ensure_collection()
    assert opened_elsewhere(tmp_path / "a") == "qdrant_locked"

    second = Settings(_env_file=None, qdrant_path=str(tmp_path / "b"), embedding_dimensions=8)  # type: ignore[call-arg]
    wiring.embedder(second)  # another settings object: the cache starts again
    assert opened_elsewhere(tmp_path / "a") == "0"

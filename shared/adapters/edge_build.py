"""Building a Qdrant Edge shard's HNSW index without freezing the process that serves it
(`ingest serve`; issue 30 item 3).

Edge holds the GIL for the whole `optimize()` (96 s at 20,000 points here, 11 minutes at
100,000): in the serving process every request would wait that long. So the build runs in a
child process on a copy of the shard folder:

1. **snapshot**: writers paused (the shard's write lock), flush, copy the folder to
   `<collection>.building`; from then on every write to the live shard notes what it touched
   (point ids, documents deleted by filter) in a journal. Searches go on during the copy.
2. **build**: a child process (`python -m shared.adapters.edge_build FOLDER PARENT_PID`) loads
   the copy, `optimize()`, flushes, exits; searches and writes go on against the live shard.
3. **swap** (writers and readers paused, well under a second at 12,000 points): the touched
   points are read from the live shard, the live shard is closed and moved aside
   (`<collection>.replaced`), the copy takes its name, is loaded, and the journal is replayed
   into it (documents deleted again, touched points written again or deleted); every index
   object on the folder moves to the new shard (they share one `ShardHolder`).

A crash at any point leaves folders the next open puts right (`restore`, `tidy`): a
`.replaced` without its folder is moved back; then a stray `.building` or `.replaced` is
removed.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import qdrant_edge as edge

from shared.adapters.index import SPARSE
from shared.log import get_logger

log = get_logger(__name__)

#: The defaults of EDGE_BUILD_THRESHOLD and EDGE_REBUILD_STEP. Below this many points a shard
#: is searched brute force: faster to search than to index at that size, and no build at all
#: (docs/benchmarks.md, "Issue 30"). Points written since the last build (brute force until
#: built) that make the next build due: each costs a brute-force comparison per search (~5 ms
#: for 5,000 of 1536 dimensions).
BUILD_THRESHOLD = 10_000
REBUILD_STEP = 5_000


@dataclass
class Journal:
    """What writes touched on the live shard since the snapshot, for the swap to replay."""

    ids: set[str] = field(default_factory=set)
    documents: list[str] = field(default_factory=list)


@dataclass
class ShardHolder:
    """The one open shard of a folder in this process, shared by every index object on it.

    `write_lock`: every write, the snapshot and the swap. `read_lock`: every read and the
    swap (a search never runs on a shard being closed). Edge holds the GIL during its calls,
    so the locks cost no parallelism."""

    folder: Path
    shard: edge.EdgeShard
    users: int = 1
    write_lock: threading.RLock = field(default_factory=threading.RLock)
    read_lock: threading.RLock = field(default_factory=threading.RLock)
    journal: Journal | None = None
    build: ChildBuild | None = None
    unbuilt_after_build: int = 0  # what the last build left brute force (below Edge's threshold)

    @contextmanager
    def writing(
        self, ids: Iterable[str] = (), document: str | None = None
    ) -> Iterator[edge.EdgeShard]:
        """The shard for a write touching `ids` (or deleting `document`), noted in the journal
        while a build runs."""
        with self.write_lock:
            if self.journal is not None:
                self.journal.ids.update(ids)
                if document is not None:
                    self.journal.documents.append(document)
            yield self.shard

    @contextmanager
    def reading(self) -> Iterator[edge.EdgeShard]:
        with self.read_lock:
            yield self.shard


def unbuilt(shard: edge.EdgeShard) -> int:
    """Points searched brute force (not in a built segment). Edge counts a vector as indexed
    when it is in an index: a sparse vector always is (its inverted index is kept as points
    arrive), a dense one only once built (measured on qdrant-edge-py 0.9.0)."""
    info = shard.info()
    with_sparse = shard.count(
        edge.CountRequest(exact=True, filter=edge.Filter(must=[edge.HasVectorCondition(SPARSE)]))
    )
    return max(0, info.points_count - (info.indexed_vectors_count - with_sparse))


def due(holder: ShardHolder, threshold: int, step: int) -> bool:
    """A build pays: the shard holds `threshold` points and `step` of them are still brute
    force beyond what the last build could not index."""
    with holder.reading() as shard:
        points = shard.count(edge.CountRequest(exact=True))
        waiting = unbuilt(shard)
    return points >= threshold and waiting - holder.unbuilt_after_build >= step


class ChildBuild:
    """One build of a copy of `folder` in a child process."""

    def __init__(self, folder: Path) -> None:
        self.copy = building(folder)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "shared.adapters.edge_build", str(self.copy), str(os.getpid())],
            stdin=subprocess.DEVNULL,
        )

    def exit_code(self) -> int | None:
        """None while it runs; 0 built; negative: ended by a signal (a shutdown)."""
        assert self.process is not None
        return self.process.poll()

    def cancel(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.copy, ignore_errors=True)


def building(folder: Path) -> Path:
    return folder.with_name(folder.name + ".building")


def replaced(folder: Path) -> Path:
    return folder.with_name(folder.name + ".replaced")


def restore(folder: Path) -> None:
    """Before a folder is opened: a swap that stopped between its two renames left the old
    shard aside and no folder; it goes back."""
    if not folder.exists() and replaced(folder).exists():
        os.rename(replaced(folder), folder)


def tidy(folder: Path) -> None:
    """Once this process holds the folder (no other can be building or swapping it): remove
    what an interrupted build or swap left beside it."""
    shutil.rmtree(building(folder), ignore_errors=True)
    shutil.rmtree(replaced(folder), ignore_errors=True)


def start(holder: ShardHolder) -> bool:
    """Snapshot the shard (writers paused) and start the child's build on the copy; False
    (and a log line) when there is no room for the copy or the child did not start."""
    build = ChildBuild(holder.folder)
    size = folder_bytes(holder.folder)
    free = shutil.disk_usage(holder.folder.parent).free
    if free < size + size // 10:  # the copy and some room for the built index
        log.warning(
            "no room on disk for a copy of the index to build; searches stay brute force",
            folder=str(holder.folder),
            needed_mb=round(size * 1.1 / 1e6),
            free_mb=round(free / 1e6),
        )
        return False
    try:
        with holder.write_lock:
            shutil.rmtree(build.copy, ignore_errors=True)
            holder.shard.flush()
            shutil.copytree(holder.folder, build.copy)
            holder.journal = Journal()
        build.start()
    except Exception as exc:  # a disk full during the copy, no child process
        log.warning("the index build could not start", folder=str(holder.folder), error=repr(exc))
        holder.journal = None
        build.cancel()
        return False
    holder.build = build
    log.info("index build started in a child process", folder=str(holder.folder))
    return True


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _back_off(holder: ShardHolder) -> None:
    """No new attempt until `step` more points wait unbuilt (not every round)."""
    with holder.reading() as shard:
        holder.unbuilt_after_build = unbuilt(shard)


def cancel(holder: ShardHolder) -> None:
    if holder.build is not None:
        holder.build.cancel()
    holder.build = None
    holder.journal = None


def step(
    holder: ShardHolder,
    load: Callable[[Path], edge.EdgeShard],
    threshold: int = BUILD_THRESHOLD,
    step: int = REBUILD_STEP,
) -> None:
    """Start a build when one is due (`due`), swap a finished one in; returns at once
    otherwise."""
    if holder.build is None:
        if due(holder, threshold, step) and not start(holder):
            _back_off(holder)
        return
    code = holder.build.exit_code()
    if code is None:
        return
    if code != 0:
        log.warning("the index build in a child process failed", code=code)
        if code > 0:  # not a shutdown's signal: a build that fails is not tried every round
            _back_off(holder)
        cancel(holder)
        return
    swap(holder, load)


def swap(holder: ShardHolder, load: Callable[[Path], edge.EdgeShard]) -> None:
    """Replace the live shard by the built copy, with the writes made during the build."""
    assert holder.build is not None and holder.journal is not None
    copy, folder, aside = holder.build.copy, holder.folder, replaced(holder.folder)
    with holder.write_lock, holder.read_lock:
        journal, holder.journal, holder.build = holder.journal, None, None
        ids: list[Any] = sorted(journal.ids)
        current = holder.shard.retrieve(ids, True, True) if ids else []
        holder.shard.close()
        try:
            os.rename(folder, aside)
            os.rename(copy, folder)
            shard = load(folder)
            _replay(shard, journal, ids, current)
        except Exception:
            log.exception("the built index could not be swapped in; the old one stays")
            if aside.exists():
                shutil.rmtree(folder, ignore_errors=True)
                os.rename(aside, folder)
            shutil.rmtree(copy, ignore_errors=True)
            holder.shard = load(folder)
            return
        holder.shard = shard
        holder.unbuilt_after_build = unbuilt(shard)
    shutil.rmtree(aside, ignore_errors=True)
    log.info(
        "index build swapped in",
        folder=str(folder),
        replayed=len(ids),
        brute_force=holder.unbuilt_after_build,
    )


def _replay(shard: edge.EdgeShard, journal: Journal, ids: list[Any], current: list[Any]) -> None:
    for document in journal.documents:
        match = edge.FieldCondition("document_id", match=edge.MatchValue(document))
        shard.update(edge.UpdateOperation.delete_points_by_filter(edge.Filter(must=[match])))
    found = {str(r.id) for r in current}
    gone: list[Any] = [i for i in ids if i not in found]
    if gone:
        shard.update(edge.UpdateOperation.delete_points(gone))
    points = [edge.Point(str(r.id), _vectors(r.vector), r.payload or {}) for r in current]
    for start_at in range(0, len(points), 1000):
        shard.update(edge.UpdateOperation.upsert_points(points[start_at : start_at + 1000]))
    shard.flush()


def _vectors(stored: Any) -> dict[str, Any]:
    return {
        name: edge.SparseVector(list(v.indices), list(v.values)) if hasattr(v, "indices") else v
        for name, v in stored.items()
    }


def _die_with(parent: int) -> None:
    """Linux: end this child when its parent ends (a killed server leaves no build behind)."""
    with suppress(AttributeError, OSError):  # not Linux: the next open removes the copy
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        sys.exit(1)


def main(argv: list[str]) -> int:
    """The child: build the copy's index and exit (0 when it is built and flushed)."""
    folder, parent = Path(argv[0]), int(argv[1])
    _die_with(parent)
    os.nice(10)  # the server's requests first
    shard = edge.EdgeShard.load(str(folder))
    shard.optimize()
    shard.flush()
    shard.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Building the Edge index in a child process on a copy (`ingest serve`): the writes made
during the build are in the built shard after the swap, searches answer throughout, every
index object on the folder moves to the new shard, and a failed swap or a crash leaves the
old shard in service."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import models as qm

from shared.adapters import edge_build
from shared.adapters.edge_build import building, replaced, unbuilt
from shared.adapters.index import Point
from shared.adapters.qdrant_edge import EdgeIndex
from tests.support.workers import wait_for

DIMENSIONS = 1536  # 2,000 of them pass Edge's own indexing threshold (10 MB a segment)


#: A build due at 2,000 points (default 10,000), again after 500 more (default 5,000).
BUILD_AT = (2_000, 500)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[EdgeIndex]:
    made = EdgeIndex.open(str(tmp_path / "edge"), "c", DIMENSIONS, build_at=BUILD_AT)
    yield made
    made.close()


def points(count: int, document: str, seed: int, dimensions: int = DIMENSIONS) -> list[Point]:
    rng = np.random.default_rng(seed)
    return [
        Point(
            uuid.uuid4(),
            rng.normal(size=dimensions).tolist(),
            {"document_id": document, "hidden": False, "n": n},
            qm.SparseVector(indices=[n % 50, 100 + n % 7], values=[1.0, 0.5]),
        )
        for n in range(count)
    ]


def build_until_swapped(index: EdgeIndex, during: list[str]) -> None:
    """Step the build as `ingest serve`'s runner does, noting each round it was running."""

    def swapped() -> bool:
        index.build_aside()
        if index.holder.build is not None:
            during.append("running")
        return index.holder.build is None

    wait_for(swapped, timeout=240, what="the child's build to be swapped in")


DOC_A, DOC_B, DOC_GONE = (uuid.UUID(int=n) for n in (1, 2, 3))


def test_a_build_in_a_child_process_keeps_the_writes_made_meanwhile(index: EdgeIndex) -> None:
    first = points(1_995, str(DOC_A), 1)
    index.upsert(first + points(5, str(DOC_GONE), 2))
    other = EdgeIndex.open(str(index.root), "c", DIMENSIONS, BUILD_AT)  # the same shard
    assert unbuilt(index.shard) == 2_000

    index.build_aside()
    assert index.holder.build is not None and building(index.folder).exists()
    # Writes during the build: new points, a deleted point, a deleted document, new fields.
    added = points(30, str(DOC_B), 3)
    index.upsert(added)
    index.delete([first[0].id])
    index.delete_document(DOC_GONE)
    index.set_fields([first[1].id, added[0].id], {"hidden": True})
    assert index.candidates(first[5].vector, None, 1)[0].id == first[5].id  # searches go on
    during: list[str] = []
    build_until_swapped(index, during)

    assert during, "the build ran in the background, across rounds"
    assert not building(index.folder).exists() and not replaced(index.folder).exists()
    assert unbuilt(index.shard) < 100, "the dense vectors are in a built HNSW index"
    assert index.count() == 1_995 - 1 + 30
    assert index.retrieve([first[0].id]) == []
    hidden = {p.id: p.payload["hidden"] for p in index.retrieve([first[1].id, added[0].id])}
    assert hidden == {first[1].id: True, added[0].id: True}
    assert index.candidates(added[3].vector, None, 1)[0].id == added[3].id
    stored = index.retrieve([added[4].id])[0]
    assert stored.sparse is not None and list(stored.sparse.indices) == [4, 104]
    assert other.count() == index.count(), "every index object on the folder moved"
    other.close()
    index.build_aside()
    assert index.holder.build is None, "nothing new: no build due"


def test_no_build_below_the_threshold(index: EdgeIndex) -> None:
    index.upsert(points(1_999, str(DOC_A), 1, dimensions=DIMENSIONS))
    index.build_aside()
    assert index.holder.build is None and not building(index.folder).exists()


def test_a_swap_that_fails_keeps_the_old_shard_in_service(index: EdgeIndex) -> None:
    index.upsert(points(2_000, str(DOC_A), 1))
    index.build_aside()
    build = index.holder.build
    assert build is not None
    wait_for(lambda: build.exit_code() is not None, timeout=240, what="the child's build")
    edge_build.shutil.rmtree(build.copy)  # the built copy is gone before the swap
    index.upsert(points(3, str(DOC_B), 2))
    index.build_aside()

    assert index.holder.build is None
    assert index.count() == 2_003, "the old shard, with the write made during the build"
    assert (index.folder / "edge_config.json").exists()
    assert not replaced(index.folder).exists()


def test_closing_the_last_user_ends_the_build(index: EdgeIndex) -> None:
    index.upsert(points(2_000, str(DOC_A), 1))
    index.build_aside()
    build = index.holder.build
    assert build is not None and build.process is not None
    index.close()
    assert build.process.poll() is not None, "the child process ended"
    assert not build.copy.exists()


def test_a_crash_between_the_swap_renames_is_put_right_on_the_next_open(tmp_path: Path) -> None:
    root = tmp_path / "edge"
    first = EdgeIndex.open(str(root), "c", 8)
    first.upsert(points(3, str(DOC_A), 1, dimensions=8))
    folder = first.folder
    first.close()
    folder.rename(replaced(folder))  # the swap had moved the old shard aside, then died
    building(folder).mkdir()  # and a copy of an interrupted build was left

    again = EdgeIndex.open(str(root), "c", 8)
    assert again.count() == 3
    assert not building(folder).exists() and not replaced(folder).exists()
    again.close()


def test_a_copy_that_cannot_be_made_is_not_tried_again_every_round(index: EdgeIndex) -> None:
    """A disk full during the copy (here: a file where the copy goes) leaves the shard in
    service, brute force, and the next attempt waits for `step` more points, not one round."""
    index.upsert(points(2_000, str(DOC_A), 1))
    building(index.folder).write_text("in the way")
    index.build_aside()
    assert index.holder.build is None and index.holder.journal is None
    assert index.count() == 2_000
    building(index.folder).unlink()
    index.build_aside()
    assert index.holder.build is None, "backed off: not every round"
    index.upsert(points(BUILD_AT[1], str(DOC_B), 2))
    index.build_aside()
    assert index.holder.build is not None, "tried again after `step` more points"

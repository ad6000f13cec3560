"""All SQL of the service, one module per concern. Functions take a Session; the caller
owns the transaction. Import the package (`from shared import repository as repo`).

Every state change goes through `transition`, or `leases.finish` (the same for a batch of
versions): a conditional UPDATE that succeeds for exactly one caller, with its event rows
written in the same transaction. Leases (which task holds which version) are in `leases`.

Row locks (LOCK_ORDER): a transaction that locks a document does so before any of its
versions (register, supersede, make current, delete), and every row lock is FOR NO KEY
UPDATE, the strength an UPDATE that changes no key takes. FOR UPDATE would also block the
FOR KEY SHARE that Postgres takes on the document for a version row's foreign-key check, so
a stage writing its version twice in one transaction would deadlock with a registration.
Stages lock only their own version row (and the document first, where they describe it);
a batch stage locks its versions' rows with SKIP LOCKED, so it never waits on another's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.repository.documents import (
        active_collection,
        complete_delivery,
        current_version_ids,
        document_still_deleted,
        mark_document_deleted,
        mark_purged,
        record_delivery,
        set_active_collection,
    )
    from shared.repository.embedding_batches import (
        add_batch,
        add_job,
        add_job_tokens,
        batches_of,
        claim_poll,
        current_chunks,
        current_chunks_by_id,
        latest_job,
        mark_requests_done,
        open_requests,
        release_poll,
        requests_of_batch,
        running_job,
        switched_job,
        update_batch,
        update_job,
    )
    from shared.repository.finalize import make_current, stale_points_of
    from shared.repository.hiding import (
        ChunkTarget,
        current_point_ids_of,
        find_current_chunk,
        hidden_chunks_of,
        hidden_everywhere,
        hidden_points_of,
        set_chunk_hidden,
        set_document_hidden,
    )
    from shared.repository.leases import (
        BatchClaim,
        add_move_events,
        claim,
        finish,
        heartbeat,
        held_elsewhere,
        lock_documents_of,
        release,
        release_owner,
    )
    from shared.repository.queries import (
        DocumentTotals,
        count_chunks,
        current_point_ids,
        document_by_identity,
        document_events,
        document_history,
        document_sources,
        document_totals,
        document_versions,
        documents_with_id_prefix,
        failures_by_code,
        find_document,
        get_document,
        indexed_version_number,
        latest_version,
        list_documents,
        previous_version,
        recent_documents,
        recent_stage_times,
        status_counts,
        tokens_spent_total,
        version_chunks,
        version_file,
        versions_by_id,
    )
    from shared.repository.reaper import (
        oldest_waiting_since,
        stuck_in_stage,
        touch_for_retry,
        unpurged_documents,
        waiting_for_work,
        waiting_in_received,
    )
    from shared.repository.relabel import (
        current_points_of,
        fields_behind,
        lock_for_relabel,
        metadata_versions_among,
        point_ids_by_version,
        record_fields_revision,
        waiting_relabels,
    )
    from shared.repository.stages import (
        add_usages,
        chunks_with_vectors_of,
        chunks_without_vectors_of,
        describe_document,
        indexed_chunk_count,
        load_version,
        other_live_lease,
        replace_chunks_of,
        save_fetched,
        store_vectors,
        versions_with,
    )
    from shared.repository.vector_cache import cached_vectors, remember_vectors
    from shared.repository.verify import current_chunks_at, documents_in_flight
    from shared.repository.versions import (
        STAGE_TIMESTAMP,
        Registered,
        add_event,
        dialect_insert,
        fail_version,
        fields_of,
        lock_document,
        mark_fetched_unchanged,
        register_field_changes,
        register_version,
        supersede_in_flight,
        transition,
    )

# The names above are imported on first use (PEP 562), from the first submodule that has them,
# not with the package: `ingest status` reads through `overview` (the plain database driver)
# and starts without SQLAlchemy's ORM, which the other modules import: importing them all
# takes 1.5 s against the 0.2 s of `overview` alone. The block above is for type checkers.
_SUBMODULES = (
    "documents",
    "embedding_batches",
    "finalize",
    "hiding",
    "leases",
    "queries",
    "reaper",
    "relabel",
    "stages",
    "vector_cache",
    "versions",
    "verify",
)


def __getattr__(name: str) -> object:
    if not name.startswith("_"):
        for submodule in _SUBMODULES:
            module = importlib.import_module(f"{__name__}.{submodule}")
            if name in vars(module) and getattr(vars(module)[name], "__module__", None) in (
                module.__name__,
                None,
            ):
                value = vars(module)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

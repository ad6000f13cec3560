"""All SQL of the service, one module per concern. Functions take a Session; the caller
owns the transaction. Import the package (`from shared import repository as repo`).

Every state change goes through `transition` (or the lease helpers built on it, or
`finish_batch`, the same for a batch of versions): a conditional UPDATE that succeeds for
exactly one caller, with its event rows written in the same transaction.

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
    from shared.repository.batches import (
        BatchClaim,
        add_usages,
        chunks_with_vectors_of,
        chunks_without_vectors_of,
        claim_batch,
        finish_batch,
        heartbeat_batch,
        lock_documents_of,
        release_batch,
        release_owner,
    )
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
    from shared.repository.finalize_batches import make_current
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
        waiting_in_received,
    )
    from shared.repository.stages import (
        add_usage,
        chunk_point_ids,
        describe_document,
        indexed_chunk_count,
        load_version,
        other_live_lease,
        replace_chunks,
        replace_chunks_of,
        save_conversion,
        save_fetched,
        store_vectors,
    )
    from shared.repository.versions import (
        STAGE_TIMESTAMP,
        Claim,
        Registered,
        add_event,
        claim_stage,
        dialect_insert,
        fail_version,
        finish_stage,
        heartbeat,
        lock_document,
        mark_fetched_unchanged,
        register_version,
        release,
        supersede_in_flight,
        transition,
    )

# The submodules are imported on first use of one of their names (PEP 562), not with the
# package: `ingest status` reads through `overview` (the plain database driver) and starts
# without SQLAlchemy's ORM, which alone takes about half of its 0.5 s start-up budget.
_SUBMODULES = (
    "batches",
    "documents",
    "finalize_batches",
    "queries",
    "reaper",
    "stages",
    "versions",
)


def __getattr__(name: str) -> object:
    if name in __all__:
        for submodule in _SUBMODULES:
            module = importlib.import_module(f"{__name__}.{submodule}")
            if name in vars(module):
                value = vars(module)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "STAGE_TIMESTAMP",
    "BatchClaim",
    "Claim",
    "DocumentTotals",
    "Registered",
    "active_collection",
    "add_event",
    "add_usage",
    "add_usages",
    "chunk_point_ids",
    "chunks_with_vectors_of",
    "chunks_without_vectors_of",
    "claim_batch",
    "claim_stage",
    "complete_delivery",
    "count_chunks",
    "current_point_ids",
    "current_version_ids",
    "describe_document",
    "dialect_insert",
    "document_by_identity",
    "document_events",
    "document_history",
    "document_sources",
    "document_still_deleted",
    "document_totals",
    "document_versions",
    "documents_with_id_prefix",
    "fail_version",
    "failures_by_code",
    "find_document",
    "finish_batch",
    "finish_stage",
    "get_document",
    "heartbeat",
    "heartbeat_batch",
    "indexed_chunk_count",
    "latest_version",
    "list_documents",
    "load_version",
    "lock_document",
    "lock_documents_of",
    "make_current",
    "mark_document_deleted",
    "mark_fetched_unchanged",
    "mark_purged",
    "oldest_waiting_since",
    "other_live_lease",
    "previous_version",
    "recent_documents",
    "recent_stage_times",
    "record_delivery",
    "register_version",
    "release",
    "release_batch",
    "release_owner",
    "replace_chunks",
    "replace_chunks_of",
    "save_conversion",
    "save_fetched",
    "set_active_collection",
    "status_counts",
    "store_vectors",
    "stuck_in_stage",
    "supersede_in_flight",
    "tokens_spent_total",
    "touch_for_retry",
    "transition",
    "unpurged_documents",
    "version_chunks",
    "version_file",
    "versions_by_id",
    "waiting_in_received",
]

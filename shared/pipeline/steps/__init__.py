"""The pipeline's steps, each written once: a plain function over a batch of version ids (one
version is a batch of one) that claims them, does the work, and finishes or gives back every
lease (`runner`). Two schedulers run them: Celery tasks (`worker.tasks`) and the in-process
scheduler behind `ingest run` (`shared.pipeline.in_process`)."""

from shared.pipeline.steps.chunk import chunk_versions
from shared.pipeline.steps.convert import convert_versions
from shared.pipeline.steps.delete import delete_document
from shared.pipeline.steps.embed import embed_versions
from shared.pipeline.steps.finalize import finalize_versions
from shared.pipeline.steps.relabel import relabel_versions
from shared.pipeline.steps.runner import Outcome
from shared.pipeline.steps.upsert import upsert_versions

__all__ = [
    "Outcome",
    "chunk_versions",
    "convert_versions",
    "delete_document",
    "embed_versions",
    "finalize_versions",
    "relabel_versions",
    "upsert_versions",
]

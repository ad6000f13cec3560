"""Celery signal hooks: our log format in every worker and beat, and ids on every task's lines.

`setup_logging` has a receiver, so Celery leaves the root logger to `shared.log` (the level is
`LOG_LEVEL`, not `celery -l`). Around each task the task id, task name, stage and the version
(or document) id are bound, so Celery's own "Task ... succeeded" line carries them too; the
stage's own lines add the document id, read with its claim (no extra read per task). When
finalize makes a version current, one `ingest finished` line sums the document up.
"""

from __future__ import annotations

from typing import Any

from celery import Task
from celery.signals import setup_logging, task_postrun, task_prerun

from shared import log
from shared.settings import get_settings

TASK_PREFIX = "ingest."
DOCUMENT_TASKS = {"ingest.delete"}  # their argument is a document id, not a version id


@setup_logging.connect
def _configure(**_: Any) -> None:
    log.configure_logging(get_settings())


def task_ids(task_name: str, task_id: str | None, args: tuple[Any, ...]) -> dict[str, object]:
    """The ids to bind for one task run: task, stage, and the version or document it works on."""
    ids: dict[str, object] = {
        "task_id": task_id,
        "task_name": task_name,
        "stage": task_name.removeprefix(TASK_PREFIX),
    }
    if not args:
        return ids
    if task_name in DOCUMENT_TASKS:
        ids["document_id"] = args[0]
        return ids
    if isinstance(args[0], list | tuple):  # a batch: each version's lines carry its own ids
        if len(args[0]) == 1:
            ids["version_id"] = args[0][0]
        else:
            ids["versions"] = len(args[0])
        return ids
    ids["version_id"] = args[0]  # the stage binds the document id to its lines
    return ids


@task_prerun.connect
def _bind_task(task_id: str, task: Task[Any, Any], args: tuple[Any, ...] = (), **_: Any) -> None:
    log.clear()
    log.bind(**task_ids(task.name, task_id, tuple(args or ())))


@task_postrun.connect
def _unbind_task(**_: Any) -> None:
    """The finalize stage writes each version's "ingest finished" line itself."""
    log.clear()

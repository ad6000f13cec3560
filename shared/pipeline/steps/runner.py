"""Claim -> work -> finish, the same for every step: what a step's batch came to (`Outcome`),
the leases it holds, given back in one place on any error (`Holding`), and the rules for one
version's error (`Holding.each`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from types import TracebackType

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.db import transaction
from shared.errors import PermanentError
from shared.log import bind, get_logger
from shared.pipeline.convert import OcrNeeded
from shared.pipeline.failures import fail_version
from shared.settings import Settings
from shared.states import Status

log = get_logger("shared.pipeline.steps")

#: How often long work (OCR, a slow API) renews its leases, at most.
HEARTBEAT_SECONDS = 30.0


@dataclass
class Outcome:
    """Where a step's versions go next: on to the next stage, again later, or nowhere."""

    go_on: list[uuid.UUID] = field(default_factory=list)  # to the next stage
    done: list[uuid.UUID] = field(default_factory=list)  # of `go_on`: moved by this step
    busy: list[uuid.UUID] = field(default_factory=list)  # held by another live task: later
    stopped: list[uuid.UUID] = field(default_factory=list)  # left the pipeline, or elsewhere
    ocr: list[uuid.UUID] = field(default_factory=list)  # scanned PDFs, for the `ocr` queue
    retry: list[uuid.UUID] = field(default_factory=list)  # met `error`: to try again alone
    error: Exception | None = None
    handover: str | None = None  # the owner whose leases the next stage takes over

    def moved(self, version_ids: Iterable[uuid.UUID]) -> None:
        ids = list(version_ids)
        self.go_on += ids
        self.done += ids

    def __str__(self) -> str:
        """The task's result in Flower: it names the versions it moved on (searchable there)."""
        done = ", ".join(str(v) for v in self.go_on)
        return f"done {len(self.go_on)}: {done}; busy {len(self.busy)}, stopped {len(self.stopped)}"


def lease_for(settings: Settings) -> timedelta:
    """How long a claim holds its versions (`LEASE_SECONDS`)."""
    return timedelta(seconds=settings.lease_seconds)


def heartbeat_interval(settings: Settings) -> float:
    """How often long work renews its leases: well before a short lease runs out."""
    return min(HEARTBEAT_SECONDS, settings.lease_seconds / 3)


class Holding:
    """The leases a step holds. Leaving the `with` block on an error gives every one back (in a
    transaction of its own, after `before_release`), so the next claim takes the versions;
    the last transaction (`finishing`) gives back all but those handed on to the next stage."""

    def __init__(
        self,
        owner: str,
        settings: Settings,
        claimed: dict[uuid.UUID, uuid.UUID],
        outcome: Outcome,
        before_release: Callable[[Session], None] = lambda session: None,
    ) -> None:
        self.owner = owner
        self.settings = settings
        self.documents = dict(claimed)  # version id -> document id
        self.held = list(claimed)
        self.outcome = outcome
        self._before_release = before_release
        self._beat = time.monotonic()

    def __enter__(self) -> Holding:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if error is None or not self.held:
            return
        try:
            with transaction() as session:
                self._before_release(session)
                repo.release(session, self.owner, self.held)
            self.held = []
        except Exception as lost:  # the leases run out by themselves; the first error counts
            log.warning("could not give leases back", error=repr(lost), owner=self.owner)

    @contextmanager
    def each(self, version_id: uuid.UUID) -> Iterator[None]:
        """One version's work: its error stays its own. A permanent one (the input is wrong)
        fails it with its code; scanned pages needing OCR go to the `ocr` queue; anything else
        (a transient error, a bug) sends it to be tried again alone (`outcome.retry`)."""
        try:
            with bind(version_id=str(version_id), document_id=str(self.documents[version_id])):
                yield
        except PermanentError as exc:
            fail_version(version_id, code=exc.code, message=exc.message, actor=self.owner)
            self.held.remove(version_id)  # failing gave the lease back
            self.outcome.stopped.append(version_id)
        except OcrNeeded as needed:
            log.info("handed to the ocr queue", pages=len(needed.pages))
            self.outcome.ocr.append(version_id)
        except Exception as exc:
            self.outcome.retry.append(version_id)
            self.outcome.error = exc

    def drop(self, version_id: uuid.UUID) -> None:
        """A version that left the pipeline during the work (its move gave the lease back)."""
        self.held.remove(version_id)
        self.outcome.stopped.append(version_id)

    def keep_alive(self) -> None:
        """Renew the leases during long work (OCR takes seconds a page), every so often."""
        if time.monotonic() - self._beat >= heartbeat_interval(self.settings):
            with transaction() as session:
                repo.heartbeat(session, self.owner, self.held, lease_for(self.settings))
            self._beat = time.monotonic()

    @contextmanager
    def finishing(self) -> Iterator[Session]:
        """The step's last transaction: once it commits, nothing is held any more (what it
        did not move or hand on it gave back with `close`); if it fails, all is given back."""
        with transaction() as session:
            yield session
        self.held = []

    def close(self, session: Session, handed_on: Iterable[uuid.UUID] = ()) -> None:
        """Give back every lease but those of `handed_on` (kept for the next stage)."""
        keep = set(handed_on)
        repo.release(session, self.owner, [v for v in self.held if v not in keep])

    def hand_on(self) -> list[uuid.UUID]:
        """Every lease goes on to the next stage as it is (nothing to write)."""
        held, self.held = self.held, []
        return held


def log_done(
    stage: Status, documents: dict[uuid.UUID, uuid.UUID], ids: Iterable[uuid.UUID]
) -> None:
    for version_id in ids:
        with bind(version_id=str(version_id), document_id=str(documents.get(version_id))):
            log.info("stage done", state=str(stage))

"""A cooperative time limit for conversion, checked between pages and inside pypdf's visitor.

Signals are not available inside Celery's prefork children, so conversion checks the clock
itself (the task's hard time limit remains the backstop).
"""

from __future__ import annotations

import time

from shared.errors import PermanentError


class Deadline:
    """A point in time after which conversion gives up with `conversion_timeout`."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expires = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.expires:
            raise PermanentError(
                f"Converting this PDF took longer than the limit of {self.seconds:g} seconds. "
                "It may be unusually large or complex: export it again from the original "
                "program (or split it) and upload it again.",
                code="conversion_timeout",
            )

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(self.expires - time.monotonic(), 0.0)

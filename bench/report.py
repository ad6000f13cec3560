"""Writing a benchmark's section into docs/benchmarks.md (replacing the old one)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(heading: str, section: str) -> None:
    """Replace `## <heading>` (up to the next `## `) with `section`, or append it."""
    text = DOC.read_text() if DOC.exists() else "# Benchmarks\n\n"
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip() + "\n\n", text)
    else:
        text = text.rstrip() + "\n\n" + section.rstrip() + "\n"
    DOC.write_text(text.rstrip() + "\n")

"""Where the repository and the tests' own corpus are."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The tests' own Markdown pages (origin and licence in its README); bench/ uses the larger corpus.
CORPUS = ROOT / "tests" / "corpus"
CORPUS_PAGES = sorted(p for p in CORPUS.rglob("*.md") if p.name != "README.md")

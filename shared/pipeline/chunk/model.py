"""The chunker's two types: its settings and its output (imported by every stage of it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from shared.settings import Settings

OverlapScope = Literal["section", "h1", "document"]


@dataclass(frozen=True)
class ChunkSettings:
    """Chunk sizes in cl100k_base tokens (defaults: the `CHUNK_*` settings' defaults)."""

    target_tokens: int = 350
    max_tokens: int = 450
    overlap_tokens: int = 70
    min_tokens: int = 50
    # Where a chunk's overlap may come from: the same section (heading path), the same H1
    # section, or anywhere in the document (whatever the previous chunk is).
    overlap_scope: OverlapScope = "h1"
    # Whether the sections of a split H1 section are packed together toward the target, or
    # each starts a chunk of its own (`CHUNK_PACK_SECTIONS`).
    pack_sections: bool = True
    # CPU seconds one document may take (`budget`); None: no limit (the pure function).
    cpu_seconds: float | None = None

    @property
    def overlap_across_h1(self) -> bool:
        return self.overlap_scope == "document"

    @classmethod
    def from_settings(cls, settings: Settings) -> ChunkSettings:
        return cls(
            target_tokens=settings.chunk_target_tokens,
            max_tokens=settings.chunk_max_tokens,
            overlap_tokens=settings.chunk_overlap_tokens,
            min_tokens=settings.chunk_min_tokens,
            overlap_scope=settings.chunk_overlap_scope,
            pack_sections=settings.chunk_pack_sections,
            cpu_seconds=settings.chunk_cpu_seconds,
        )


@dataclass(frozen=True)
class Chunk:
    """One chunk: `text` is what gets embedded and stored (overlap included)."""

    index: int
    text: str
    token_count: int
    headings: list[str]
    heading: str | None
    heading_level: int | None
    kinds: list[str]
    code_languages: list[str]
    admonition_types: list[str]
    char_start: int
    char_end: int
    overlap_tokens: int
    new_text_offset: int
    # Every section the text covers, in order: {"headings": [...], "char_start", "char_end"}
    # (ranges in `text`); `headings` above is only where the chunk's own text starts.
    sections: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def new_text(self) -> str:
        """The part of `text` that is this chunk's own (no overlap, no repeated structure)."""
        return self.text[
            self.new_text_offset : self.new_text_offset + self.char_end - self.char_start
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (lists and plain values only). A shallow copy: the chunker builds every
        list and dict afresh for each chunk, so `asdict`'s deep copy would only cost time."""
        return dict(self.__dict__)

"""The chunker (DESIGN.md "Chunking"): `chunk_markdown(text, settings)` is the front door.

Inside: `markdown_blocks` finds the top-level blocks with exact offsets, `packing` groups them
into drafts (H1, then H2 and deeper, then blocks), `split` cuts a block over the budget at its
own seams, `overlap` takes the clean tail of the previous chunk, `token_sums` counts joined
texts without encoding them again, and `assemble` puts the final chunks together. `model`
holds the settings and the chunk type that all of them share.
"""

from shared.pipeline.chunk.assemble import chunk_markdown, front_matter, normalise
from shared.pipeline.chunk.model import Chunk, ChunkSettings

__all__ = ["Chunk", "ChunkSettings", "chunk_markdown", "front_matter", "normalise"]

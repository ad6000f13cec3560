"""The chunker: `chunk_markdown(text, settings)` is the front door.

Inside: `markdown_blocks` finds the top-level blocks with exact offsets (`gfm_table`: tables
as GitHub renders them), `packing` groups them into drafts (H1, then H2 and deeper, then
blocks; no heading left at a draft's end), `split` cuts a block over the budget at its own
seams, `overlap` takes a clean tail of the previous chunk, `sections` names every section a
chunk covers, `doc_tokens` reads the tokens of any slice from one encode of the document
(at the seams `token_sums` knows), and `assemble` puts the final chunks together. `model`
holds the settings and the chunk type they share.
"""

from shared.pipeline.chunk.assemble import chunk_markdown, front_matter, normalise
from shared.pipeline.chunk.model import Chunk, ChunkSettings

__all__ = ["Chunk", "ChunkSettings", "chunk_markdown", "front_matter", "normalise"]

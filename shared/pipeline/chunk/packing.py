"""Packing blocks into chunk drafts: H1 sections, then H2 (and deeper) groups, then blocks.

Token counts here are estimates: each block is counted exactly (`doc_tokens`: one encode of
the document) and a join between blocks counts as one token. The chunker measures every
final text and never lets one exceed the maximum; the caps below leave room for the overlap
and a small margin for those estimates.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from shared.pipeline.chunk.budget import check
from shared.pipeline.chunk.doc_tokens import DocTokens
from shared.pipeline.chunk.markdown_blocks import Block
from shared.pipeline.chunk.model import ChunkSettings
from shared.pipeline.chunk.split import fence_closer, split_block
from shared.tokens import encoding

HeadingPath = tuple[tuple[int, str], ...]
_MARGIN = 4  # tokens kept free for joins that do not tokenise exactly as estimated


@dataclass(frozen=True)
class Draft:
    """A chunk before overlap: `prefix + source[start:end] + suffix`, blocks first..last."""

    first: int
    last: int
    start: int
    end: int
    tokens: int
    first_section: int
    last_section: int
    heading_path: HeadingPath
    has_content: bool = True  # False: headings only
    prefix: str = ""
    suffix: str = ""


class Packer:
    """Turns one document's blocks into drafts in three passes (H1 sections, then H2 and
    deeper groups, then blocks), then merges drafts under the minimum."""

    def __init__(self, source: str, blocks: list[Block], settings: ChunkSettings) -> None:
        self.source = source
        self.blocks = blocks
        self.settings = settings
        # The document's tokens (kept: the overlap and the final counts slice them too).
        self.doc = DocTokens(source, blocks[0].start if blocks else 0)
        self.tokens = self.doc.counts([(b.start, b.end) for b in blocks])
        self.hard = settings.max_tokens - _MARGIN
        soft = self.hard - settings.overlap_tokens
        self.cap = max(soft, self.hard // 2) if settings.overlap_tokens > 0 else self.hard
        self.target = max(min(settings.target_tokens, self.cap), 1)
        self.sections, self.paths = _sections_and_paths(blocks)

    def drafts(self) -> list[Draft]:
        drafts: list[Draft] = []
        start = 0
        for index in range(1, len(self.blocks) + 1):
            if index == len(self.blocks) or self.sections[index] != self.sections[start]:
                first_of_doc = start == 0
                no_overlap = first_of_doc or not self.settings.overlap_across_h1
                drafts.extend(self._section(start, index, self.hard if no_overlap else self.cap))
                start = index
        return self._no_orphan_headings(self._merge_small(drafts))

    def _estimate(self, first: int, stop: int) -> int:
        return sum(self.tokens[first:stop]) + (stop - first - 1)

    def _section(self, first: int, stop: int, cap: int) -> list[Draft]:
        """Pass 1: one section per H1; it stays whole when it fits."""
        if self._estimate(first, stop) <= cap:
            return [self._draft(first, stop)]
        return self._groups(first, stop, level=2)

    def _groups(self, first: int, stop: int, level: int) -> list[Draft]:
        """Pass 2 (and deeper): split at headings of `level`, pack whole groups together."""
        if level > 6:
            return self._pack_blocks(first, stop)
        starts = [first] + [
            i
            for i in range(first + 1, stop)
            if self.blocks[i].kind == "heading" and self.blocks[i].level <= level
        ]
        if len(starts) == 1:
            return self._groups(first, stop, level + 1)
        drafts: list[Draft] = []
        current, current_tokens = first, 0
        for group_start, group_stop in zip(starts, [*starts[1:], stop], strict=True):
            check()
            size = self._estimate(group_start, group_stop)
            if current < group_start and self._fits_group(current_tokens, size):
                current_tokens += size + 1
                continue
            if current < group_start:
                drafts.append(self._draft(current, group_start))
            if size <= self.cap:
                current, current_tokens = group_start, size
            else:
                drafts.extend(self._groups(group_start, group_stop, level + 1))
                current, current_tokens = group_stop, 0
        if current < stop:
            drafts.append(self._draft(current, stop))
        return drafts

    def _fits_group(self, current: int, size: int) -> bool:
        """A heading's section joins the current draft when sections are packed, else only
        while the draft is still under the minimum."""
        if self.settings.pack_sections:
            return self._fits(current, size)
        return current < self.settings.min_tokens and current + 1 + size <= self.cap

    def _fits(self, current: int, size: int) -> bool:
        """Add to the current draft while it stays near the target (or is still too small)."""
        total = current + 1 + size
        return total <= self.target or (current < self.settings.min_tokens and total <= self.cap)

    def _pack_blocks(self, first: int, stop: int) -> list[Draft]:
        """Pass 3: whole blocks toward the target; a block over the maximum is split."""
        drafts: list[Draft] = []
        current, current_tokens = first, 0
        for index in range(first, stop):
            check()
            size = self.tokens[index]
            if current < index:
                heading_last = self.blocks[index - 1].kind == "heading"
                if self._fits(current_tokens, size) or (
                    heading_last and current_tokens + 1 + size <= self.cap
                ):
                    current_tokens += size + 1
                    continue
                drafts.append(self._draft(current, index))
            if size <= self.cap:
                current, current_tokens = index, size
                continue
            if size <= self.hard:  # fits in the maximum: never split, overlap gives way
                drafts.append(self._draft(index, index + 1))
            else:
                drafts.extend(self._pieces(index))
            current, current_tokens = index + 1, 0
        if current < stop:
            drafts.append(self._draft(current, stop))
        return drafts

    def smaller(self, draft: Draft) -> list[Draft]:
        """Two or more drafts for one whose measured text came out over the maximum."""
        if draft.first < draft.last:
            middle = (draft.first + draft.last) // 2
            left = self._draft(draft.first, middle + 1)
            right = self._draft(middle + 1, draft.last + 1)
            left = replace(left, start=draft.start, prefix=draft.prefix, suffix="")
            return [left, replace(right, end=draft.end, suffix=draft.suffix)]
        block = Block("text", draft.start, draft.end)
        prefix, suffix = draft.prefix, draft.suffix
        overhead = len(encoding().encode_ordinary(prefix + suffix)) + _MARGIN
        if 2 * overhead > self.cap:  # settings too small for the structure: drop it, not the max
            prefix, suffix, overhead = "", "", _MARGIN
        pieces = split_block(
            self.source, block, max(self.target // 2, 1), self.cap - overhead, self.doc
        )
        base = self._draft(draft.first, draft.first + 1)
        return [
            replace(
                base,
                start=piece.start,
                end=piece.end,
                tokens=piece.tokens + overhead,
                prefix=prefix if number == 0 else "",
                suffix=suffix if number == len(pieces) - 1 else "",
            )
            for number, piece in enumerate(pieces)
        ]

    def _pieces(self, index: int) -> list[Draft]:
        block = self.blocks[index]
        base = self._draft(index, index + 1)
        return [
            replace(
                base, start=p.start, end=p.end, tokens=p.tokens, prefix=p.prefix, suffix=p.suffix
            )
            for p in split_block(self.source, block, self.target, self.cap, self.doc)
        ]

    def _draft(self, first: int, stop: int) -> Draft:
        last = stop - 1
        content = [i for i in range(first, stop) if self.blocks[i].kind != "heading"]
        suffix = fence_closer(self.source, self.blocks[last])
        return Draft(
            first=first,
            last=last,
            start=self.blocks[first].start,
            end=self.blocks[last].end,
            tokens=self._estimate(first, stop) + (2 if suffix else 0),
            first_section=self.sections[first],
            last_section=self.sections[last],
            heading_path=self.paths[content[0] if content else last],
            has_content=bool(content),
            suffix=suffix,
        )

    def _merge_small(self, drafts: list[Draft]) -> list[Draft]:
        """Drafts under the minimum join a neighbour when the result fits."""
        index = 0
        while index < len(drafts):
            partner = None
            if drafts[index].tokens < self.settings.min_tokens:
                partner = self._partner(drafts, index)
            if partner is None:
                index += 1
                continue
            left = min(index, partner)
            drafts[left : left + 2] = [_join(drafts[left], drafts[left + 1])]
            index = left
        return drafts

    def _partner(self, drafts: list[Draft], index: int) -> int | None:
        """Forward first (a small piece often introduces what follows), then backward; a
        piece with text stays within its H1 section, a heading-only one may join the next."""
        across = (False,) if drafts[index].has_content else (False, True)
        for same_section in (not a for a in across):
            for limit in (self.cap, self.hard):
                for other in (index + 1, index - 1):
                    if 0 <= other < len(drafts):
                        left, right = sorted((drafts[index], drafts[other]), key=lambda d: d.start)
                        if self._joinable(left, right, limit, same_section):
                            return other
        return None

    def _joinable(self, left: Draft, right: Draft, limit: int, same_section: bool) -> bool:
        if left.suffix or right.prefix:
            return False
        if same_section and left.last_section != right.first_section:
            return False
        starts_section = left.first == 0 or (
            not self.settings.overlap_across_h1
            and (left.first_section != self.sections[left.first - 1])
            and left.start == self.blocks[left.first].start
        )
        return left.tokens + right.tokens + 1 <= (self.hard if starts_section else limit)

    def _no_orphan_headings(self, drafts: list[Draft]) -> list[Draft]:
        """A draft never ends with headings whose text is in the next draft: they move to it
        (a heading-only draft disappears into the next), which is cut smaller if needed."""
        result: list[Draft] = []
        for index, draft in enumerate(drafts):
            following = drafts[index + 1] if index + 1 < len(drafts) else None
            first_heading = self._trailing_headings(draft)
            if following is None or first_heading is None or not self._starts_block(following):
                result.append(draft)
                continue
            if following.first != draft.last + 1:
                result.append(draft)
                continue
            moved = self._with_headings(first_heading, following)
            if moved is None:
                result.append(draft)
                continue
            if first_heading > draft.first:
                kept = self._draft(draft.first, first_heading)
                result.append(replace(kept, start=draft.start, prefix=draft.prefix))
            drafts[index + 1 : index + 2] = moved
        return result

    def _trailing_headings(self, draft: Draft) -> int | None:
        """Index of the first of the headings a draft ends with (None: it ends with text)."""
        if draft.suffix or draft.end != self.blocks[draft.last].end:
            return None
        index = draft.last
        while index >= draft.first and self.blocks[index].kind == "heading":
            index -= 1
        if index == draft.last or (index < draft.first and not self._starts_block(draft)):
            return None
        return index + 1

    def _starts_block(self, draft: Draft) -> bool:
        return not draft.prefix and draft.start == self.blocks[draft.first].start

    def _with_headings(self, heading: int, draft: Draft) -> list[Draft] | None:
        """`draft` with the headings from block `heading` on in front, as one draft or, when
        that is over the maximum, cut at its blocks or (one block) at the block's seams."""
        lead = self._estimate(heading, draft.first) + 1
        whole = replace(
            self._draft(heading, draft.last + 1),
            end=draft.end,
            suffix=draft.suffix,
            tokens=lead + draft.tokens,
        )
        if whole.tokens <= self.hard:
            return [whole]
        if 2 * lead > self.cap:
            return None  # headings longer than half a chunk: leave them where they are
        if draft.first == draft.last and draft.end != self.blocks[draft.first].end:
            # The first piece of a split block, over the maximum with the headings: cut that
            # piece again, as its block (fences closed and reopened), the headings in front.
            return self._cut_with_headings(
                heading, draft, replace(self.blocks[draft.first], end=draft.end)
            )
        if draft.end != self.blocks[draft.last].end:  # blocks, then the first piece of one
            first, *rest = self.smaller(draft)
            joined = replace(whole, end=first.end, suffix=first.suffix, tokens=lead + first.tokens)
            return [joined, *rest] if joined.tokens <= self.hard else None
        if draft.first < draft.last:
            # As many blocks as fit with the headings (the first one split if even it does
            # not); halving instead could leave headings and a block over the maximum, and
            # the assembler would then cut the headings off on their own.
            # At least one block stays behind, so each step works on a smaller draft.
            cut = draft.first
            while cut + 1 < draft.last and lead + self._estimate(draft.first, cut + 2) <= self.hard:
                cut += 1
            led = self._with_headings(heading, self._draft(draft.first, cut + 1))
            if led is None:
                return None
            tail = replace(self._draft(cut + 1, draft.last + 1), end=draft.end, suffix=draft.suffix)
            return [*led, tail]
        return self._cut_with_headings(heading, draft, self.blocks[draft.first])

    def _cut_with_headings(self, heading: int, draft: Draft, block: Block) -> list[Draft]:
        """One block's text (`draft`'s) in pieces, the first with the headings from block
        `heading` on in front of it, each small enough for them."""
        lead = self._estimate(heading, draft.first) + 1
        pieces = split_block(self.source, block, self.target, self.cap - lead, self.doc)
        drafts = [
            replace(draft, start=p.start, end=p.end, tokens=p.tokens, prefix=p.prefix)
            for p in pieces
        ]
        drafts = [replace(d, suffix=p.suffix) for d, p in zip(drafts, pieces, strict=True)]
        first = drafts[0]
        drafts[0] = replace(
            self._draft(heading, draft.first + 1),
            end=first.end,
            tokens=first.tokens + lead,
            suffix=first.suffix,
        )
        return drafts


def _join(left: Draft, right: Draft) -> Draft:
    return replace(
        left,
        last=right.last,
        end=right.end,
        tokens=left.tokens + right.tokens + 1,
        last_section=right.last_section,
        heading_path=left.heading_path if left.has_content else right.heading_path,
        has_content=left.has_content or right.has_content,
        suffix=right.suffix,
    )


def _sections_and_paths(blocks: list[Block]) -> tuple[list[int], list[HeadingPath]]:
    """H1 section number of each block, and the heading path in effect at it."""
    sections: list[int] = []
    paths: list[HeadingPath] = []
    section = 0
    stack: list[tuple[int, str]] = []
    for block in blocks:
        if block.kind == "heading":
            if block.level == 1:
                section += 1
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            if block.title:
                stack.append((block.level, block.title))
        sections.append(section)
        paths.append(tuple(stack))
    return sections, paths

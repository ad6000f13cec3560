"""Conversion defects on real folders: reading order, cut sentences, empty headings, repeats.

    uv run python bench/folder_order.py                       # every PDF in /work/shared/nl-folders
    uv run python bench/folder_order.py --source /tmp/old     # the converter of another checkout
    uv run python bench/folder_order.py --save /tmp/md        # keep each folder's Markdown too
    uv run python bench/folder_order.py --show                # print each defect found

Reads the folders where they are (never copies them) and converts each in-process, timed.
Per folder it counts, against poppler's `pdftotext` (a reading order made from positions):

- order: 6-word shingles of our text that poppler has once, out of order (not on the
  longest increasing run of their poppler positions), and backward jumps among them;
- cut: paragraphs that stop mid-sentence (no closing punctuation) and go on, after a
  paragraph break or a heading, with a lower-case word ("cut, long": only where what
  follows has more than 12 words, leaving out one-line list items without a bullet);
- empty: headings with nothing under them before the next heading of the same or a higher
  level;
- repeated: lines of our text that poppler's text of at least half the folders holds too
  (the feedback block, the other-languages block, contact boxes), counted per folder, and
  footer codes (a bare 10-14 digit number);
- hyphens: words poppler breaks at a hyphen that is real (a capital or digit before it:
  "MDL-" "artsen") that our text no longer writes with the hyphen.

Poppler's order is itself wrong on a few pages (REFERENCE_QUIRKS, each looked at on the
rendered page): shingles there are left out of the order counts unless `--all`. A paragraph
that runs into a bulleted list (a lead-in without a colon: "Meld ... aan de arts of" / "- u
zwanger bent") is cut by the page itself and is not counted as cut.

Not a test: figures go to docs/benchmarks.md ("Real folders: conversion defects").
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = Path("/work/shared/nl-folders")
SHINGLE = 6
_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = (".", "!", "?", ":", ";", "…", ")", '"', "”")
_FOOTER_CODE = re.compile(r"^\d{10,14}$")
_REAL_HYPHEN = re.compile(r"(\b[\w]*[A-Z0-9][\w]*)-\n(\w+)")
# Pages where poppler's own order is wrong: (folder, 1-based page) -> what it does there.
REFERENCE_QUIRKS = {
    ("1799-methotrexaat-toedienen-bij-kinderen-en-jongeren-met-ziekte-van-crohn.pdf", 3): (
        "two columns of bulleted steps: from the 9th line on, poppler weaves the lines of "
        "the two columns together, one left, one right"
    ),
    ("5529-zwangerschapshypertensie-pre-eclampsie-en-hellp-syndroom.pdf", 1): (
        "the title broken after 'HELLP-' reads 'HELLPsyndroom' in poppler (hyphen dropped), "
        "so the title's words match only the first sentence, which repeats them"
    ),
}


def poppler_text(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _plain(markdown: str) -> str:
    return re.sub(r"^\s*(#+|[-*]|\d+[.)])\s+", "", markdown, flags=re.M).replace("\\", "")


def order_defects(
    reference: str, ours: str, show: list[str] | None = None, skip: frozenset[int] = frozenset()
) -> tuple[int, int, int]:
    """(shingles compared, out of order, backward jumps); with `show`, the out-of-order
    shingles and the jumps are appended to it. Shingles starting on a page in `skip`
    (1-based) are not compared."""
    pages = [n for n, page in enumerate(reference.split("\f"), start=1) for _ in _words(page)]
    ref = _words(reference)
    counts = Counter(tuple(ref[i : i + SHINGLE]) for i in range(len(ref) - SHINGLE + 1))
    position = {
        tuple(ref[i : i + SHINGLE]): i
        for i in range(len(ref) - SHINGLE + 1)
        if counts[tuple(ref[i : i + SHINGLE])] == 1 and pages[i] not in skip
    }
    words = _words(_plain(ours))
    seen: set[tuple[str, ...]] = set()
    sequence = []
    for i in range(len(words) - SHINGLE + 1):
        shingle = tuple(words[i : i + SHINGLE])
        if shingle in position and shingle not in seen:
            seen.add(shingle)
            sequence.append(position[shingle])
    tails: list[int] = []  # longest increasing subsequence, patience sorting
    for value in sequence:
        at = bisect.bisect_left(tails, value)
        tails[at : at + 1] = [value]
    jumps = [(a, b) for a, b in itertools.pairwise(sequence) if b < a - SHINGLE]
    if show is not None:
        show.extend(_disorder(ref, sequence))
        show.extend(
            f"back jump: ...{' '.join(ref[a : a + SHINGLE])} -> {' '.join(ref[b : b + SHINGLE])}..."
            for a, b in jumps
        )
    return len(sequence), len(sequence) - len(tails), len(jumps)


def _disorder(ref: list[str], sequence: list[int]) -> list[str]:
    """The shingles off one longest increasing run, as runs of reference words."""
    parent: list[int] = [-1] * len(sequence)
    tail_index: list[int] = []
    tails: list[int] = []
    for index, value in enumerate(sequence):
        at = bisect.bisect_left(tails, value)
        parent[index] = tail_index[at - 1] if at else -1
        tails[at : at + 1] = [value]
        tail_index[at : at + 1] = [index]
    kept: set[int] = set()
    index = tail_index[-1] if tail_index else -1
    while index >= 0:
        kept.add(index)
        index = parent[index]
    off = [sequence[i] for i in range(len(sequence)) if i not in kept]
    runs: list[list[int]] = []
    for value in off:
        if runs and 0 < value - runs[-1][-1] <= SHINGLE:
            runs[-1].append(value)
        else:
            runs.append([value])
    return [
        f"out of order ({len(run)}): {' '.join(ref[run[0] : run[-1] + SHINGLE])}" for run in runs
    ]


def _blocks(markdown: str) -> list[str]:
    return [block.strip() for block in re.split(r"\n\s*\n", markdown) if block.strip()]


def cut_sentences(markdown: str, min_words: int = 0, show: list[str] | None = None) -> int:
    """Paragraphs cut mid-sentence; with `min_words`, only where the block after has more
    words than that (one-line list items without a bullet, still paragraphs until drawn
    bullets are read, are left out)."""
    blocks = _blocks(markdown)
    cut = 0
    for index, block in enumerate(blocks[:-1]):
        if block.startswith(("#", "|", "- ", "* ")) or re.match(r"\d+[.)] ", block):
            continue
        if block.endswith(_SENTENCE_END):
            continue
        following = blocks[index + 1]
        if following.startswith("#") and index + 2 < len(blocks):
            following = blocks[index + 2]
        if following.startswith(("- ", "* ")):
            continue  # a lead-in the page itself continues in the list's items
        following = following.lstrip("-* ")
        if following[:1].islower() and len(following.split()) > min_words:
            cut += 1
            if show is not None:
                show.append(f"cut: ...{block[-60:]!r} | {following[:60]!r}...")
    return cut


def empty_headings(markdown: str, show: list[str] | None = None) -> tuple[int, int]:
    """(headings, headings with nothing under them)."""
    blocks = _blocks(markdown)
    levels = [len(b) - len(b.lstrip("#")) if b.startswith("#") else 0 for b in blocks]
    heads = sum(1 for level in levels if level)
    empty = 0
    for index, level in enumerate(levels):
        if not level:
            continue
        after = levels[index + 1] if index + 1 < len(levels) else 1
        if after and after <= level:
            empty += 1
            if show is not None:
                show.append(f"empty heading: {blocks[index]!r}")
    return heads, empty


def _line_key(line: str) -> str:
    return re.sub(r"\d+", "#", " ".join(_words(line)))


def boilerplate(references: dict[str, str]) -> set[str]:
    """Lines (of 3+ words) that at least half the folders' poppler text holds."""
    counts: Counter[str] = Counter()
    for text in references.values():
        counts.update({_line_key(ln) for ln in text.splitlines() if len(_words(ln)) >= 3})
    return {key for key, count in counts.items() if count >= len(references) / 2}


def repeated_lines(reference: str, markdown: str, common: set[str]) -> int:
    """Lines of poppler's text that are boilerplate and whose text is still in ours, plus
    footer codes left in ours."""
    ours = " ".join(_words(_plain(markdown)))
    ours_keys = re.sub(r"\d+", "#", ours)
    kept = sum(
        1
        for line in reference.splitlines()
        if len(_words(line)) >= 3 and _line_key(line) in common and _line_key(line) in ours_keys
    )
    codes = sum(1 for line in markdown.splitlines() if _FOOTER_CODE.match(line.strip()))
    return kept + codes


def lost_hyphens(reference: str, markdown: str) -> tuple[int, int]:
    """(real hyphens at poppler's line ends, of those written without the hyphen in ours)."""
    flat = " ".join(markdown.split())
    real = lost = 0
    for match in _REAL_HYPHEN.finditer(reference):
        left, right = match.group(1), match.group(2)
        real += 1
        if f"{left}-{right}" not in flat:
            lost += 1
    return real, lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--folders", type=Path, default=FOLDERS)
    parser.add_argument("--source", type=Path, default=ROOT, help="checkout whose converter runs")
    parser.add_argument("--save", type=Path, help="write each folder's Markdown here")
    parser.add_argument("--show", action="store_true", help="print each defect after the table")
    parser.add_argument("--all", action="store_true", help="count REFERENCE_QUIRKS pages too")
    args = parser.parse_args()
    sys.path.insert(0, str(args.source))
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
    from shared.pipeline.convert import Ocr, convert

    paths = sorted(args.folders.glob("*.pdf"))
    references = {p.name: poppler_text(p) for p in paths}
    common = boilerplate(references)
    markdowns: dict[str, str] = {}
    started = time.perf_counter()
    for path in paths:
        markdowns[path.name] = convert(path.read_bytes(), "application/pdf", ocr=Ocr.OFF).markdown
    elapsed = time.perf_counter() - started
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for name, markdown in markdowns.items():
            (args.save / (name[:-4] + ".md")).write_text(markdown)
    header = "| folder | shingles | out of order | back jumps | cut | cut, long | headings | "
    print(header + "empty | repeated | real hyphens | lost |")
    print("|---" * 11 + "|")
    totals = Counter()
    shown: dict[str, list[str]] = {}
    for path in paths:
        reference, markdown = references[path.name], markdowns[path.name]
        show = shown.setdefault(path.name, []) if args.show else None
        skip = frozenset(
            page for name, page in REFERENCE_QUIRKS if name == path.name and not args.all
        )
        shingles, disorder, jumps = order_defects(reference, markdown, show, skip)
        heads, empty = empty_headings(markdown, show)
        real, lost = lost_hyphens(reference, markdown)
        row = {
            "shingles": shingles,
            "out of order": disorder,
            "back jumps": jumps,
            "cut": cut_sentences(markdown, show=show),
            "cut, long": cut_sentences(markdown, 12),
            "headings": heads,
            "empty": empty,
            "repeated": repeated_lines(reference, markdown, common),
            "real hyphens": real,
            "lost": lost,
        }
        totals.update(row)
        print(f"| {path.name[:40]} | " + " | ".join(str(v) for v in row.values()) + " |")
    print(f"| **total ({len(paths)})** | " + " | ".join(str(v) for v in totals.values()) + " |")
    print(f"\nconversion: {elapsed:.2f} s for {len(paths)} folders (in-process, OCR off)")
    for name, defects in shown.items():
        if defects:
            print(f"\n{name}:")
            print("\n".join(f"  {line}" for line in defects))


if __name__ == "__main__":
    main()

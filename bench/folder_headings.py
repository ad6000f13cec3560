"""Headings and tables of real folders: what the pages show against what conversion keeps.

    uv run python bench/folder_headings.py                      # this checkout's converter
    uv run python bench/folder_headings.py --source /tmp/old    # the converter of another checkout
    uv run python bench/folder_headings.py --markdown DIR       # Markdown already converted

`bench/nl_folders/expected.json` lists, per folder of /work/shared/nl-folders, the headings
and tables a reader sees on the pages (written down by looking at every page; the standard
end blocks that PDF_DROP_SECTIONS removes are not expected). Per folder: headings expected,
found (a Markdown heading with the same text, case and spacing aside), missed, false
(Markdown headings that are no visible heading), level off (a found heading that goes
deeper, up or stays level where the page's previous found heading says otherwise); tables expected
and found, rows expected and kept. Not a test: the folders stay outside the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = Path("/work/shared/nl-folders")
EXPECTED = ROOT / "bench" / "nl_folders" / "expected.json"
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$")
TABLE_RULE = re.compile(r"^\|(?: *:?-+:? *\|)+$")


def key(text: str) -> str:
    """Heading text compared without case, spacing, emphasis or closing punctuation."""
    text = re.sub(r"[*_`\\]", "", text).replace("’", "'")
    return re.sub(r"\s+", " ", text).strip(" :.").casefold()


def markdown_headings(markdown: str) -> list[tuple[int, str]]:
    """(depth, text) of the ATX headings outside code fences."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.append((len(match.group(1)), match.group(2)))
    return found


def markdown_tables(markdown: str) -> list[int]:
    """Rows (header included) of each GFM table."""
    tables: list[int] = []
    rows = 0
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            rows += 0 if TABLE_RULE.match(line) else 1
        elif rows:
            tables.append(rows)
            rows = 0
    return tables


def compare(expected: dict, markdown: str) -> dict[str, int]:
    """One folder's counts."""
    emitted = markdown_headings(markdown)
    pool = Counter(key(text) for _, text in emitted)
    depths: dict[str, list[int]] = {}  # a key's depths in Markdown order, taken in turn
    for depth, text in emitted:
        depths.setdefault(key(text), []).append(depth)
    found = level_off = 0
    missed: list[str] = []
    last: tuple[int, int] | None = None  # (expected level, Markdown depth) of the last found
    for heading in expected["headings"]:
        name = key(heading["text"])
        if pool[name] > 0:
            pool[name] -= 1
            found += 1
            now = (heading["level"], depths[name].pop(0))
            if last is not None:
                step = (now[0] > last[0]) - (now[0] < last[0])
                level_off += step != (now[1] > last[1]) - (now[1] < last[1])
            last = now
        else:
            missed.append(heading["text"])
    tables = markdown_tables(markdown)
    want = expected["tables"]
    return {
        "expected": len(expected["headings"]),
        "found": found,
        "missed": len(missed),
        "false": sum(pool.values()),
        "level off": level_off,
        "tables expected": len(want),
        "tables found": min(len(tables), len(want)),
        "rows expected": sum(want),
        "rows kept": min(sum(tables), sum(want)),
        "_missed": missed,  # type: ignore[dict-item]
        "_false": [t for t in pool.elements()],  # type: ignore[dict-item]
    }


def convert_all(source: Path, paths: list[Path]) -> tuple[dict[str, str], float]:
    sys.path.insert(0, str(source))
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", "/work/shared/tiktoken-cache")
    from shared.pipeline.convert import Ocr, convert

    started = time.perf_counter()
    out = {p.stem: convert(p.read_bytes(), "application/pdf", ocr=Ocr.OFF).markdown for p in paths}
    return out, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--folders", type=Path, default=FOLDERS)
    parser.add_argument("--expected", type=Path, default=EXPECTED)
    parser.add_argument("--source", type=Path, default=ROOT, help="checkout whose converter runs")
    parser.add_argument("--markdown", type=Path, help="read FOLDER.md here instead of converting")
    parser.add_argument("--list", action="store_true", help="print the missed and false headings")
    args = parser.parse_args()
    expected = {k: v for k, v in json.loads(args.expected.read_text()).items() if k[0] != "_"}
    paths = [args.folders / f"{name}.pdf" for name in sorted(expected)]
    if args.markdown:
        markdowns = {p.stem: (args.markdown / f"{p.stem}.md").read_text() for p in paths}
        elapsed = None
    else:
        markdowns, elapsed = convert_all(args.source, paths)
    columns = ["expected", "found", "missed", "false", "level off"]
    columns += ["tables expected", "tables found", "rows expected", "rows kept"]
    print("| folder | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    totals: Counter[str] = Counter()
    notes = []
    for path in paths:
        row = compare(expected[path.stem], markdowns[path.stem])
        totals.update({c: row[c] for c in columns})
        print(f"| {path.stem[:40]} | " + " | ".join(str(row[c]) for c in columns) + " |")
        if args.list and (row["_missed"] or row["_false"]):
            notes.append(f"{path.stem}\n  missed: {row['_missed']}\n  false: {row['_false']}")
    print(f"| **all ({len(paths)})** | " + " | ".join(str(totals[c]) for c in columns) + " |")
    share = totals["found"] / max(totals["expected"], 1)
    tables = totals["tables found"] / max(totals["tables expected"], 1)
    rows = totals["rows kept"] / max(totals["rows expected"], 1)
    print(f"\nheadings found {share:.1%}, tables found {tables:.1%}, rows kept {rows:.1%}")
    if elapsed is not None:
        print(f"conversion: {elapsed:.2f} s for {len(paths)} folders (in-process, OCR off)")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()

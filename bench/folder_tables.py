"""Lists and tables of real folders: what the PDFs draw against what conversion keeps.

    uv run python bench/folder_tables.py [FOLDER]            # default ../shared/nl-folders
    uv run --with 'pdfplumber==0.11.*' python bench/folder_tables.py   # + pdfplumber's tables

Per folder: the bullets the pages draw (small filled or stroked dots and squares, any
position, counted from the content streams) and bullet glyphs in the text layer, against the
list items in the converted Markdown; the tables in the Markdown and their rows (header
included); with pdfplumber installed, the tables its finder sees (lines strategy, rows with
any text) and the CPU seconds it takes. Then the conversion time of all folders (wall and CPU;
the machine is shared, so CPU is the fairer figure). Not a test: the folders stay outside the
repository.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.pipeline.convert import convert  # noqa: E402
from shared.pipeline.convert.bullets import is_bullet_shape  # noqa: E402
from shared.pipeline.convert.graphics import GraphicsCollector  # noqa: E402

ITEM = re.compile(r"^ *[-*+] \S", re.M)
TABLE_RULE = re.compile(r"^\|(?:-+\|)+$", re.M)
GLYPHS = ("•", "▪", "◦", "●", "■", "\uf0b7", "\uf0a7")


def drawn_bullets(path: Path) -> int:
    """Small ink dots and squares the pages draw, and bullet glyphs starting a text line."""
    count = 0
    for page in PdfReader(path).pages:
        graphics = GraphicsCollector(lambda: None)
        text = page.extract_text(visitor_operand_before=graphics.visit)
        count += sum(1 for shape in graphics.shapes if is_bullet_shape(shape, 10.0))
        count += sum(1 for line in text.splitlines() if line.lstrip().startswith(GLYPHS))
    return count


def markdown_tables(markdown: str) -> tuple[int, int]:
    """(tables, rows with the header) in GFM Markdown."""
    tables = TABLE_RULE.findall(markdown)
    rows = sum(1 for line in markdown.splitlines() if line.startswith("|")) - len(tables)
    return len(tables), rows


def plumber_tables(path: Path) -> tuple[int, int, float] | None:
    try:
        import pdfplumber  # type: ignore[import-not-found]
    except ImportError:
        return None
    started = time.process_time()
    tables = rows = 0
    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            for table in page.find_tables():
                kept = [row for row in table.extract() if any(cell for cell in row)]
                if len(kept) >= 1 and max(len(row) for row in kept) >= 2:
                    tables += 1
                    rows += len(kept)
    return tables, rows, time.process_time() - started


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "nl-folders"
    files = sorted(folder.glob("*.pdf"))
    header = "| folder | bullets drawn | list items | tables | rows |"
    print(header + " pdfplumber tables | rows | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    totals = [0, 0, 0, 0, 0, 0, 0.0]
    wall = cpu = 0.0
    for path in files:
        data = path.read_bytes()
        started, started_cpu = time.perf_counter(), time.process_time()
        markdown = convert(data, "application/pdf").markdown
        wall += time.perf_counter() - started
        cpu += time.process_time() - started_cpu
        bullets, items = drawn_bullets(path), len(ITEM.findall(markdown))
        tables, rows = markdown_tables(markdown)
        plumber = plumber_tables(path)
        figures = [bullets, items, tables, rows, *(plumber or ("-", "-", 0.0))]
        for index, value in enumerate(figures):
            if not isinstance(value, str):
                totals[index] += value
        shown = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in figures]
        print(f"| {path.stem[:40]} | " + " | ".join(shown) + " |")
    print(
        "| **all** | "
        + " | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in totals)
        + " |"
    )
    print(f"\nconversion of {len(files)} folders: {wall:.2f} s wall, {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()

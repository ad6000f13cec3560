"""Benchmark: what one hostile page costs the database and the process.

The page: 64 KB of random front matter and 2,000 tiny H1 sections (~184 KB). Before the fix
the front matter was copied into every chunk row (and the chunker's output), so the chunks
table grew ~750 times the upload. `ingest run` ingests it into a Postgres database of its own
(the embedded pipeline in-process, hashing embedder, local Qdrant in a temporary folder),
under `/usr/bin/time -v` for the peak memory; a one-section page is the yardstick.
`BENCH_CODE=<folder>` runs the code of another checkout (e.g. `git archive` of main) instead.

    uv run python bench/front_matter_cost.py
"""

from __future__ import annotations

import os
import random
import re
import string
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = Path(os.environ.get("BENCH_CODE") or ROOT)  # whose pipeline runs the page
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from tests.support.services import temporary_postgres_database  # noqa: E402


def hostile_page(sections: int = 2000, front_matter_bytes: int = 63 * 1024) -> str:
    """Random front matter just under the 64 KB limit, then `sections` tiny H1 sections
    (~184 KB in all, as the probe sent)."""
    rng = random.Random(26)
    lines, size = [], 0
    while size < front_matter_bytes:
        line = f"k{len(lines)}: {''.join(rng.choices(string.ascii_letters, k=60))}\n"
        lines.append(line)
        size += len(line)
    body = "".join(
        f"# Sectie {n}\n\nKorte tekst over onderwerp {n} van de folder.\n\n"
        for n in range(sections)
    )
    return "---\n" + "".join(lines) + "---\n" + body


def run(page: str, name: str) -> dict[str, float]:
    """Ingest `page` into a fresh database; peak RSS (MB), chunks table (MB), chunk rows."""
    with temporary_postgres_database() as url, tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(page, encoding="utf-8")
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "QDRANT_PATH": str(Path(folder) / "qdrant"),
            "EMBEDDING_PROVIDER": "hashing",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(CODE),
        }
        env.pop("REDIS_URL", None)
        env.pop("QDRANT_URL", None)
        subprocess.run(
            [sys.executable, "-m", "worker.cli.main", "db", "upgrade"],
            env=env,
            cwd=CODE,
            check=True,
            capture_output=True,
        )
        done = subprocess.run(
            ["/usr/bin/time", "-v", sys.executable, "-m", "worker.cli.main", "run", str(path)],
            env=env,
            cwd=folder,
            capture_output=True,
            text=True,
        )
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        engine = sa.create_engine(url)
        try:
            with engine.connect() as connection:
                table = connection.execute(
                    sa.text("SELECT pg_total_relation_size('chunks')")
                ).scalar_one()
                rows = connection.execute(sa.text("SELECT count(*) FROM chunks")).scalar_one()
        finally:
            engine.dispose()
    return {
        "exit": done.returncode,
        "peak_mb": int(peak.group(1)) / 1024 if peak else float("nan"),
        "chunks_mb": table / 1024 / 1024,
        "rows": rows,
    }


def main() -> None:
    page = hostile_page()
    print(f"hostile page: {len(page.encode()) / 1024:.0f} KB")
    for name, text in (("small.md", "# Knie\n\nNeem uw pas mee.\n"), ("hostile.md", page)):
        found = run(text, name)
        print(
            f"{name}: exit {found['exit']}, peak RSS {found['peak_mb']:.0f} MB, "
            f"chunks table {found['chunks_mb']:.2f} MB, {found['rows']} chunk rows"
        )


if __name__ == "__main__":
    main()

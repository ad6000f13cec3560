"""Write `.env.example` from the `Settings` class, so it lists every setting and stays true.

    uv run python deploy/gen_env_example.py          # rewrite .env.example
    uv run python deploy/gen_env_example.py --check  # exit 1 when the file is out of date

Every setting is listed commented out with its default (copying the file changes nothing until
a line is uncommented); a setting's description comes from its `Field(description=...)` or, for
the many without one, from `NOTES` below. The deployment section holds the few variables that
docker compose itself needs and that have no default on purpose.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from pydantic import SecretStr
from pydantic_core import PydanticUndefined

from shared.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / ".env.example"

NOTES = {
    "database_url": "SQLAlchemy URL; Postgres: postgresql+psycopg://user:password@host:5432/db",
    "qdrant_api_key": "API key of the Qdrant server",
    "qdrant_path": "Local Qdrant folder (one process at a time), used when QDRANT_URL is unset",
    "qdrant_upsert_batch_size": "Points per Qdrant upsert request",
    "embedding_provider": "openai | hashing | auto (OpenAI when OPENAI_API_KEY is set)",
    "openai_api_key": "OpenAI API key (a secret)",
    "openai_base_url": "Any OpenAI-compatible server; unset: api.openai.com",
    "embedding_model": "Embedding model; one Qdrant collection per model and dimensions",
    "embedding_dimensions": "Vector size requested from the model",
    "embedding_batch_size": "Inputs per embeddings request (API limit 2048)",
    "embedding_max_request_tokens": "Tokens per embeddings request (API limit 300000)",
    "embedding_max_input_tokens": "Tokens per input (API limit 8192)",
    "embedding_tokens_per_minute": "The account's token limit, shared by all workers via Redis",
    "embedding_requests_per_minute": "The account's request limit, shared by all workers",
    "embedding_max_retries": "Retries of one embeddings request on 5xx/timeouts; "
    "rate-limit answers (429) are waited out apart from these, up to 4 per retry",
    "embedding_timeout_seconds": "Timeout of one embeddings request",
    "hashing_dimensions": "Vector size of the offline hashing embedder (not for production)",
    "chunk_target_tokens": "Chunk size aimed for (cl100k_base tokens)",
    "chunk_max_tokens": "Chunk size never exceeded, overlap included",
    "chunk_overlap_tokens": "Tokens repeated from the end of the previous chunk",
    "chunk_min_tokens": "Smaller pieces merge with a neighbour when that fits",
    "chunk_overlap_scope": "Where overlap may come from: section | h1 | document (anywhere); "
    "chosen by `ingest eval`, see docs/retrieval.md",
    "max_upload_bytes": "Largest accepted upload (413 above)",
    "pdf_max_pages": "Longest accepted PDF",
    "convert_timeout_seconds": "Time limit of one conversion",
    "content_fetch_max_bytes": "Largest document fetched from a CMS URL",
    "content_fetch_timeout_seconds": "Timeout of one CMS fetch",
    "cms_webhook_secret": "HMAC-SHA256 secret of the CMS webhook (a secret)",
    "webhook_tolerance_seconds": "Accepted clock skew of a signed webhook",
    "api_host": "Bind address of `ingest api` (the image sets 0.0.0.0)",
    "worker_metrics_host": "Bind address of the worker's /metrics (0.0.0.0 in a container)",
    "api_port": "Port of `ingest api`",
    "task_soft_time_limit_seconds": "Celery soft time limit of one task",
    "task_time_limit_seconds": "Celery hard time limit of one task (prefork pools only)",
    "visibility_timeout_seconds": "Redis redelivers an unacked task after this; > longest task",
    "retry_backoff_max_seconds": "Longest wait between two retries of a task",
    "reaper_interval_seconds": "How often beat (or `ingest serve`) runs the reaper",
    "received_grace_seconds": "A version still `received` after this is sent again",
    "stuck_after_seconds": "A version in one stage longer than this is resumed or failed",
    "max_attempts": "Attempts before a version ends failed",
    "log_level": "DEBUG | INFO | WARNING | ERROR",
    "log_format": "json | console | auto (JSON unless stderr is a terminal)",
}

# Variables read by docker compose (and the images it runs), not by our settings. Empty on
# purpose: `docker compose` refuses to start until they are set.
DEPLOYMENT = [
    ("POSTGRES_PASSWORD", "Password of the compose Postgres (also goes into DATABASE_URL)"),
    ("FLOWER_BASIC_AUTH", "Flower's login, user:password (required: Flower never runs open)"),
]

SECTION = re.compile(r"^\s*# --- (.+?) -+\s*$")
FIELD = re.compile(r"^\s{4}(\w+):")


def sections() -> list[tuple[str, list[str]]]:
    """The fields in the order and under the `# --- name ---` headings of the source."""
    found: list[tuple[str, list[str]]] = [("settings", [])]
    for line in inspect.getsource(Settings).splitlines():
        if heading := SECTION.match(line):
            found.append((heading.group(1), []))
        elif (field := FIELD.match(line)) and field.group(1) in Settings.model_fields:
            found[-1][1].append(field.group(1))
    return [(title, names) for title, names in found if names]


def default_text(name: str) -> str:
    info = Settings.model_fields[name]
    value = info.get_default(call_default_factory=True)
    if value is PydanticUndefined or value is None:
        return ""
    if isinstance(value, SecretStr):
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def render() -> str:
    lines = [
        "# Every setting of the service (shared/settings.py), with its default. Copy to `.env`",
        "# and uncomment what you change. Generated by deploy/gen_env_example.py: do not edit.",
    ]
    missing = [
        n for n in Settings.model_fields if not (Settings.model_fields[n].description or n in NOTES)
    ]
    if missing:
        raise SystemExit(f"add a note to deploy/gen_env_example.py for: {', '.join(missing)}")
    for title, names in sections():
        lines += ["", f"# --- {title} " + "-" * max(3, 86 - len(title))]
        for name in names:
            note = Settings.model_fields[name].description or NOTES[name]
            lines += [f"# {note.replace('`', '')}", f"# {name.upper()}={default_text(name)}"]
    lines += ["", "# --- deployment (docker compose) " + "-" * 66]
    for variable, note in DEPLOYMENT:
        lines += [f"# {note}", f"{variable}="]
    return "\n".join(lines) + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if TARGET.read_text() != text:
            print(".env.example is out of date: run uv run python deploy/gen_env_example.py")
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

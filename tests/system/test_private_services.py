"""The test session's own choice of servers (tests/support/private_services.py), tried from
outside: a pytest run in a subprocess, as a developer would start it, and what it says it used."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.support.paths import ROOT
from tests.support.private_services import answers

# A Redis test and a Postgres test; PIPELINE's Celery worker subprocess must reach both.
INNER = [
    "tests/integration/test_test_redis.py::test_a_chosen_database_is_used_as_given",
    "tests/integration/shared/test_migrate.py::test_round_trip_on_an_empty_postgres_database",
]
PIPELINE = "tests/system/pipeline/test_pipeline.py::test_markdown_page_and_pdf_brochure_end_indexed"


def run_pytest(*tests: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_with_the_defaults_skipped_the_session_starts_and_stops_its_own() -> None:
    done = run_pytest(*INNER, PIPELINE, TEST_SERVICES="private")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "3 passed" in output
    ports = {}
    for what in ("Postgres", "Redis"):
        found = re.search(rf"services: {what}: private, \w+ on 127\.0\.0\.1:(\d+)", output)
        assert found, output[-2000:]
        ports[what] = int(found.group(1))
    assert ports["Postgres"] not in (5432, 6379) and ports["Redis"] not in (5432, 6379)
    for port in ports.values():  # stopped at the end of the session
        assert not answers(f"redis://127.0.0.1:{port}")


def test_set_variables_win(postgres_admin_url: str, redis_server_url: str) -> None:
    done = run_pytest(
        *INNER,
        TEST_SERVICES="private",
        TEST_POSTGRES_ADMIN_URL=postgres_admin_url,
        TEST_REDIS_URL=redis_server_url,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "services: Postgres: TEST_POSTGRES_ADMIN_URL" in output
    assert "services: Redis: TEST_REDIS_URL" in output
    summary = [line for line in output.splitlines() if line.startswith("services:")]
    assert len(summary) == 2 and "private" not in " ".join(summary)

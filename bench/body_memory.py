"""Benchmark: the API's peak memory when a search-scoped key posts a huge body to /v1/search.

Starts the API (`uvicorn api.app:app`, one process, embedded default) on loopback, sends one
JSON body of `--mb` megabytes (a query of that many letters) with its Content-Length (or,
with `--chunked`, without one), in 1 MB writes, and reads the answer. Reports the status, the
seconds, and the process's resident memory before and at its peak (VmHWM from /proc; Linux
only).

    uv run python bench/body_memory.py [--mb 300] [--chunked]
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEARCH_KEY = "bench-search-key-0123456789"
MB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def memory_mb(pid: int, field: str) -> float:
    """`VmRSS` (now) or `VmHWM` (peak) of `pid`, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def wait_listening(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the API did not start")


def post_body(port: int, megabytes: int, chunked: bool) -> tuple[int, str]:
    """POST `{"query": "aaa..."}` of `megabytes` MB; the status and the answer's start. The
    server may answer and close early: a broken pipe then is the refusal, not an error."""
    head, tail = b'{"query": "', b'"}'
    size = megabytes * MB
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    connection.putrequest("POST", "/v1/search")
    connection.putheader("Authorization", f"Bearer {SEARCH_KEY}")
    connection.putheader("Content-Type", "application/json")
    if chunked:
        connection.putheader("Transfer-Encoding", "chunked")
    else:
        connection.putheader("Content-Length", str(size))
    connection.endheaders()

    def write(data: bytes) -> None:
        connection.send(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)

    try:
        write(head)
        chunk = b"a" * MB
        left = size - len(head) - len(tail)
        while left > 0:
            write(chunk[: min(MB, left)])
            left -= min(MB, left)
        write(tail)
        if chunked:
            connection.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    response = connection.getresponse()
    return response.status, response.read(300).decode(errors="replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--chunked", action="store_true", help="no Content-Length")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "API_KEYS": f"chatbot:{SEARCH_KEY}:search",
            "DATA_DIR": folder,
            "QDRANT_PATH": str(Path(folder) / "qdrant"),
            "LOG_LEVEL": "warning",
        }
        env.pop("REDIS_URL", None)
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "api.app:app", "--port", str(port)],
            cwd=ROOT,
            env=env,
        )
        try:
            wait_listening(port, time.monotonic() + 60)
            before = memory_mb(server.pid, "VmRSS")
            started = time.monotonic()
            status, answer = post_body(port, args.mb, args.chunked)
            seconds = time.monotonic() - started
            peak = memory_mb(server.pid, "VmHWM")
        finally:
            server.terminate()
            server.wait(timeout=30)
    how = "chunked" if args.chunked else "with Content-Length"
    print(f"body {args.mb} MB {how} -> HTTP {status} in {seconds:.1f} s")
    print(f"API memory: {before:.0f} MB before, peak {peak:.0f} MB")
    print(f"answer: {answer[:200]}")


if __name__ == "__main__":
    main()

"""Starts loclab's System One server (`experiments.serve_system_one`) as a child process on
127.0.0.1 and stops it by process group: for tests and benchmarks."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from experiments.paths import PROJECT_ROOT


@contextmanager
def system_one_server(cache_dir: Path, *overrides: str, env: dict[str, str] | None = None):
    cmd = [sys.executable, "-m", "experiments.serve_system_one", "server.port=0", *overrides]
    proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "LOCLAB_CACHE_DIR": str(cache_dir), **(env or {})}, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        url = None
        while url is None:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"System One server exited with {proc.returncode}")
            match = re.search(r"listening on (http://\S+)", line)
            url = match.group(1) if match else None
            if time.monotonic() > deadline:
                raise TimeoutError("System One server did not start")
        _wait_until_accepting(url, deadline)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def _wait_until_accepting(url: str, deadline: float) -> None:
    """The server names its port before uvicorn has bound it: a request in between is refused."""
    parsed = urlparse(url)
    while True:
        try:
            with socket.create_connection((parsed.hostname, parsed.port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"System One server at {url} does not accept connections") from None
            time.sleep(0.05)

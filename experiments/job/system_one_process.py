"""Starts a System One server as a child process on 127.0.0.1 and stops it by process group, for
tests, benchmarks and scripts: loclab's own (`experiments.serve_system_one`), or llama.cpp's
OpenAI-compatible `llama-server` with a GGUF model (for `system_one=openai_logprobs`)."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlparse

import httpx

from experiments.job.paths import PROJECT_ROOT


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


LLAMA_SERVER_ENV = "LOCLAB_LLAMA_SERVER"
LLAMA_SERVER_BUILD = "bash scripts/build_llama_server.sh"
# what the build's folder name is a digest of, in this order (the script's RECIPE)
LLAMA_SERVER_RECIPE = ("scripts/build_llama_server.sh", "scripts/llama_server_kernels.cmake")


def llama_server_build_dir() -> Path:
    """Where `scripts/build_llama_server.sh` keeps its build: llama.cpp/VERSION-RECIPE under the cache,
    VERSION read from the script, RECIPE the digest of the script and its cmake include, so a binary
    built by an older recipe is never the one found."""
    script, *_ = recipe = [PROJECT_ROOT / rel for rel in LLAMA_SERVER_RECIPE]
    version = re.search(r"^VERSION=(\S+)$", script.read_text(encoding="utf-8"), re.MULTILINE).group(1)
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in recipe)).hexdigest()[:12]
    cache = Path(os.environ.get("LOCLAB_CACHE_DIR") or Path.home() / ".cache" / "loclab")
    return cache / "llama.cpp" / f"{version}-{digest}"


def llama_server_binary() -> Path | None:
    """llama.cpp's `llama-server`: $LOCLAB_LLAMA_SERVER, else where `scripts/build_llama_server.sh` puts it."""
    named = os.environ.get(LLAMA_SERVER_ENV)
    if named:
        return Path(named)
    built = llama_server_build_dir() / "bin" / "llama-server"
    return built if built.is_file() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def llama_cpp_server(binary: Path, model: Path, *, threads: int, context: int = 4096, slots: int = 1):
    """llama.cpp's OpenAI-compatible server on 127.0.0.1 with `model` (a GGUF file); yields its `/v1`
    base URL once `/health` answers ok, and stops it by process group. `threads` as the embedded
    backend's (`system_one.backend.threads` of local_llm.yaml). One slot by default: on 2 cores
    parallel decoding only divides the same threads."""
    port = _free_port()
    cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-t", str(threads),
           "-c", str(context * slots), "--parallel", str(slots), "--no-webui"]
    log = tempfile.TemporaryFile(mode="w+")
    env = {**os.environ, "LD_LIBRARY_PATH": str(binary.parent)}  # its shared libraries lie beside it
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                log.seek(0)
                why = (" (SIGILL: an instruction this CPU refuses; rebuild it here with "
                       f"{LLAMA_SERVER_BUILD})" if proc.returncode == -signal.SIGILL else "")
                raise RuntimeError(f"llama-server exited with {proc.returncode}{why}: {log.read()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("llama-server did not load its model within 120 s")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        with suppress(ProcessLookupError):  # a server that died starting has no group left to stop
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()

"""The floor of one request to loclab's System One server: a one-question request on a keep-alive
connection, sent `--n` times in a row, with the client's Nagle algorithm on (httpx's default) and off
(TCP_NODELAY, what loclab's `http` client sets). The server turns it off on every connection.

    python benchmarks/empty_request.py [--n 200]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from experiments.job.system_one_process import system_one_server

REQUEST = {"state": {"task": "t"}, "model": "loclab-lexical",
           "questions": {"q": {"type": "noul", "instructions": "relevant?", "criteria": "pkg/core.py"}}}


def _latencies(url: str, n: int, nodelay: bool) -> list[float]:
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)] if nodelay else []
    with httpx.Client(transport=httpx.HTTPTransport(socket_options=options)) as client:
        client.post(url, json=REQUEST).raise_for_status()  # connect once
        found = []
        for _ in range(n):
            start = time.perf_counter()
            client.post(url, json=REQUEST).raise_for_status()
            found.append((time.perf_counter() - start) * 1000)
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache, system_one_server(Path(cache), "system_one.cache.enabled=false") as url:
        for nodelay in (False, True):
            ms = _latencies(url, args.n, nodelay)
            print(f"client TCP_NODELAY {'on ' if nodelay else 'off'}: median {statistics.median(ms):6.2f} ms, "
                  f"p90 {statistics.quantiles(ms, n=10)[-1]:6.2f} ms over {args.n} requests")


if __name__ == "__main__":
    main()

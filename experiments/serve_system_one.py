"""`python -m experiments.serve_system_one system_one=lexical`: serve a backend on 127.0.0.1.

Prints `loclab System One listening on URL` once the socket is bound (port 0 picks a free port).
"""

from __future__ import annotations

import ipaddress
import socket
import sys

import hydra
import uvicorn
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from experiments.job.identity import bound_backend
from experiments.job.paths import register_resolvers
from locator.redact import secret_from_env
from locator.system_one.cache import DecisionCache
from locator.system_one.server import FaultPlan, Limits, create_app, header_deadline

register_resolvers()


@hydra.main(version_base="1.3", config_path="../conf", config_name="serve")
def main(cfg: DictConfig) -> None:
    so, server = cfg.system_one, cfg.server
    backend = bound_backend(instantiate(so.backend))  # /healthz names the code that answers
    cache = DecisionCache(so.cache.path) if so.cache.enabled else None
    api_key = None
    if server.api_key_env:
        api_key = secret_from_env(server.api_key_env)
        if not api_key:
            raise SystemExit(f"server.api_key_env={server.api_key_env} is not set")
    concurrent = server.max_concurrent_requests
    if not isinstance(concurrent, int) or isinstance(concurrent, bool) or concurrent < 1:
        raise SystemExit(f"server.max_concurrent_requests must be a positive number of requests, got {concurrent!r}")
    faults = FaultPlan(**OmegaConf.to_container(server.faults, resolve=True))
    limits = Limits(max_request_bytes=server.max_request_bytes, max_questions=server.max_questions,
                    max_concurrent_requests=server.max_concurrent_requests, max_buffered_bytes=server.max_buffered_bytes,
                    body_timeout_s=server.body_timeout_s)
    if api_key is None and not _loopback(server.host):
        print(f"WARNING: serving on {server.host}, reachable from other machines, WITHOUT a key: anyone who can reach "
              f"it can spend this backend. Set server.api_key_env to require a bearer key.", file=sys.stderr, flush=True)
    app = create_app(backend, so.model, cache, faults, limits, api_key)
    sock = listening_socket(server.host, server.port)
    host, port = sock.getsockname()
    print(f"loclab System One listening on http://{host}:{port}/v1/answer (backend {backend.identity})", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", workers=1, http=header_deadline(server.header_timeout_s),
                                  timeout_keep_alive=server.idle_timeout_s)).run(sockets=[sock])


def listening_socket(host: str, port: int) -> socket.socket:
    """Bound, for uvicorn to listen on. IPPROTO_TCP is named because asyncio turns Nagle's algorithm
    off (TCP_NODELAY) only on sockets that say so: without it every small answer waited ~40 ms for
    the client's delayed ACK (44-48 ms per empty request; 3-4 ms with it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


if __name__ == "__main__":
    main()

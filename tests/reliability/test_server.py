"""Probes: loclab's System One server under hostile requests, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from experiments.job.paths import PROJECT_ROOT
from experiments.serve_system_one import _loopback
from experiments.job.system_one_process import system_one_server

pytestmark = pytest.mark.network

KEY = "srv-key-loclab-probe-41b2"
QUESTION = {"type": "noul", "instructions": "relevant?", "criteria": "pkg/core.py"}


def _request(questions: int, pad: int = 0) -> dict:
    return {"state": {"task": "parse_config" + " x" * pad}, "model": "loclab-lexical",
            "questions": {f"q{i}": QUESTION for i in range(questions)}}


def test_an_oversized_body_is_refused_with_413(tmp_path):
    with system_one_server(tmp_path / "cache", "server.max_request_bytes=20000") as url:
        small = httpx.post(url, json=_request(2), timeout=30)
        big = httpx.post(url, json=_request(2, pad=20000), timeout=30)
        chunked = httpx.post(url, content=iter([b'{"state": {"task": "' + b"x" * 15000, b"y" * 15000 + b'"}}']),
                             headers={"content-type": "application/json"}, timeout=30)  # no Content-Length
    assert small.status_code == 200
    assert big.status_code == 413 and "larger than 20000 bytes" in big.json()["detail"]
    assert chunked.status_code == 413


def test_too_many_questions_are_refused_with_413(tmp_path):
    with system_one_server(tmp_path / "cache", "server.max_questions=8") as url:
        assert httpx.post(url, json=_request(8), timeout=30).status_code == 200
        refused = httpx.post(url, json=_request(9), timeout=30)
    assert refused.status_code == 413 and "at most 8" in refused.json()["detail"]


def test_stats_need_the_key_when_one_is_set(tmp_path):
    with system_one_server(tmp_path / "cache", "server.api_key_env=LOCLAB_PROBE_KEY", env={"LOCLAB_PROBE_KEY": KEY}) as url:
        stats = url.replace("/v1/answer", "/v1/stats")
        assert httpx.get(stats, timeout=30).status_code == 401
        assert httpx.get(stats, headers={"Authorization": "Bearer wrong"}, timeout=30).status_code == 401
        assert httpx.get(stats, headers={"Authorization": f"Bearer {KEY}"}, timeout=30).status_code == 200
        assert httpx.post(url, json=_request(1), headers={"Authorization": f"Bearer {KEY[:-1]}"}, timeout=30).status_code == 401


def test_serving_beyond_loopback_without_a_key_is_loudly_warned():
    assert _loopback("127.0.0.1") and _loopback("::1") and _loopback("localhost")
    assert not _loopback("0.0.0.0") and not _loopback("10.0.0.5")
    # bind every interface for a moment (no traffic is sent anywhere): the warning comes first
    proc = subprocess.Popen([sys.executable, "-m", "experiments.serve_system_one", "server.host=0.0.0.0", "server.port=0"],
                            cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert line.startswith("WARNING: serving on 0.0.0.0") and "WITHOUT a key" in line


def test_more_requests_than_the_default_worker_threads_are_answered_at_once(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    requests = 48  # the thread pool's default is 40: 8 of these waited for a thread
    # each answer is held until all 48 are in flight: reached only if the server works on 48 at once,
    # however slowly a loaded machine's client threads send them (with 40 threads: held 30 s, peak 40)
    with system_one_server(tmp_path / "cache", f"server.faults.hold_until_in_flight={requests}") as url:
        with httpx.Client(limits=httpx.Limits(max_connections=requests)) as client, \
                ThreadPoolExecutor(max_workers=requests) as pool:
            answers = list(pool.map(lambda i: client.post(url, json=_request(1, pad=i), timeout=30), range(requests)))
        stats = httpx.get(url.replace("/v1/answer", "/v1/stats"), timeout=30).json()
    assert all(a.status_code == 200 for a in answers)
    assert stats["peak_in_flight"] == requests and stats["in_flight"] == 0


@pytest.mark.parametrize("value", ["0", "many"])
def test_a_server_concurrency_that_is_not_a_positive_count_is_refused(value):
    proc = subprocess.run([sys.executable, "-m", "experiments.serve_system_one", "server.port=0",
                           f"server.max_concurrent_requests={value}"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "server.max_concurrent_requests must be a positive number" in proc.stderr


def test_a_request_the_backend_cannot_read_is_a_4xx_not_a_500(tmp_path):
    bad_task = {**_request(1), "state": {"task": float("nan")}}
    with system_one_server(tmp_path / "cache") as url:
        nan = httpx.post(url, content='{"state": {"task": NaN}, "model": "m", "questions": {"q0": '
                                      + f'{__import__("json").dumps(QUESTION)}}}',
                         headers={"content-type": "application/json"}, timeout=30)
        missing = httpx.post(url, json={**bad_task, "state": {}}, timeout=30)
        stats = httpx.get(url.replace("/v1/answer", "/v1/stats"), timeout=30).json()
    assert nan.status_code == 422  # not JSON (NaN): refused before any backend sees it
    assert missing.status_code == 422 and "task text" in missing.json()["detail"]
    assert stats["requests"] == 1  # the NaN body never reached the handler


def test_a_dense_text_request_is_answered(tmp_path):
    """A 450 KB array dump is ~1 token per character: counted in pieces, never over the tokenizer's limit."""
    dump = ", ".join(str(i % 10) for i in range(150_000))
    request = {"state": {"task": "parse_config fails"}, "model": "m",
               "questions": {"q0": {**QUESTION, "content": dump}}}
    with system_one_server(tmp_path / "cache", "server.max_request_bytes=2000000") as url:
        answered = httpx.post(url, json=request, timeout=120)
    assert answered.status_code == 200, answered.text[:300]


def _connect(url: str):
    import socket
    from urllib.parse import urlparse

    where = urlparse(url)
    conn = socket.create_connection((where.hostname, where.port), timeout=10)
    return conn


def _closed_within(conn, seconds: float, trickle: bytes = b"") -> bool:
    """Whether the server closes `conn` within `seconds`, while `trickle` is sent a byte at a time."""
    import time

    deadline = time.monotonic() + seconds
    conn.settimeout(0.25)
    sent = 0
    while time.monotonic() < deadline:
        try:
            if sent < len(trickle):
                conn.send(trickle[sent:sent + 1])
                sent += 1
            if conn.recv(65536) == b"":
                return True
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def test_silent_connections_and_headers_sent_a_byte_at_a_time_are_closed(tmp_path):
    limits = ("server.header_timeout_s=1", "server.idle_timeout_s=1")
    with system_one_server(tmp_path / "cache", *limits) as url:
        silent, slow = _connect(url), _connect(url)
        assert _closed_within(silent, 6)
        assert _closed_within(slow, 6, trickle=b"POST /v1/answer HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200)
        with httpx.Client() as client:  # a keep-alive connection left idle after its answer is closed too
            assert client.post(url, json=_request(1), timeout=30).status_code == 200
            assert client.post(url, json=_request(1), timeout=30).status_code == 200  # a second request on it is fine
        answered = _connect(url)
        body = json.dumps(_request(1)).encode()
        answered.sendall(b"POST /v1/answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        assert answered.recv(12) == b"HTTP/1.1 200"
        assert _closed_within(answered, 6)


def _content_length(reply: bytes) -> int:
    head = reply.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    return next((int(line.split(":", 1)[1]) for line in head.split("\r\n") if line.startswith("content-length:")), 0)


def test_a_body_that_trickles_in_is_refused_with_408(tmp_path):
    with system_one_server(tmp_path / "cache", "server.body_timeout_s=1") as url:
        conn = _connect(url)
        conn.sendall(b"POST /v1/answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{")
        conn.settimeout(10)
        reply = b""
        for byte in b'"state": {"task": "' * 20:  # a byte every 50 ms: never done within the deadline
            conn.send(bytes([byte]))
            try:
                conn.settimeout(0.05)
                reply += conn.recv(65536)
            except TimeoutError:
                continue
            except (ConnectionResetError, BrokenPipeError):
                break
            if reply:
                break
        conn.settimeout(10)  # with TCP_NODELAY the head and the body may come as two segments: read to the end
        while b"\r\n\r\n" in reply and len(reply.partition(b"\r\n\r\n")[2]) < _content_length(reply):
            more = conn.recv(65536)
            if not more:
                break
            reply += more
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert b"not received within 1 s" in reply


def test_request_bodies_held_at_once_are_bounded_and_the_refusal_is_retryable(tmp_path):
    import time

    with system_one_server(tmp_path / "cache", "server.max_buffered_bytes=100000", "server.max_request_bytes=80000",
                           "server.body_timeout_s=60") as url:
        held = _connect(url)  # 60 KB of a 70 KB body, held open
        held.sendall(b"POST /v1/answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 70000"
                     b"\r\n\r\n" + b" " * 60000)
        time.sleep(1.0)
        refused = httpx.post(url, content=b" " * 50000 + json.dumps(_request(1)).encode(),
                             headers={"content-type": "application/json"}, timeout=30)
        held.close()
        time.sleep(1.0)
        admitted = httpx.post(url, content=b" " * 50000 + json.dumps(_request(1)).encode(),
                              headers={"content-type": "application/json"}, timeout=30)
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert "more than 100000 bytes of request bodies held at once" in refused.json()["detail"]
    assert admitted.status_code == 200, admitted.text[:300]


def test_the_server_socket_turns_nagle_off_on_every_connection():
    """asyncio sets TCP_NODELAY on an accepted connection only when the listening socket names IPPROTO_TCP."""
    import asyncio
    import socket

    from experiments.serve_system_one import listening_socket

    async def probe() -> int:
        seen: list[int] = []

        async def handler(reader, writer):
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handler, sock=listening_socket("127.0.0.1", 0))
        host, port = server.sockets[0].getsockname()[:2]
        _, writer = await asyncio.open_connection(host, port)
        while not seen:
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        return seen[0]

    assert asyncio.run(probe()) != 0

"""The http backend against loclab's real server on 127.0.0.1, with injected faults."""

from __future__ import annotations

import socket

import pytest

from locator.system_one.client import SystemOne
from locator.system_one.transport import SystemOneUnavailableError
from locator.system_one.wire import InvalidAnswerError, Question
from locator.trace import Trace
from experiments.job.system_one_process import system_one_server
from tests.configs import backend as compose_backend

STATE = {"task": "parse_wheel_filename accepts names that are not escaped"}
QUESTIONS = {
    "file": Question(type="noul", instructions="relevant?", criteria="packaging/utils.py parse_wheel_filename"),
    "pick": Question(type="choice", instructions="which?", criteria={"a": "def parse_wheel_filename(", "b": "def other("}),
}
FAST = dict(max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.05, timeout_s=5)


@pytest.fixture
def server_cache(tmp_path):
    return tmp_path / "server-cache"


def _client(url, **kw):
    return SystemOne(compose_backend("http", url=url, model="loclab-lexical", **(FAST | kw)), "loclab-lexical", trace=Trace())


def test_answers_over_http_equal_the_in_process_backend(server_cache):
    with system_one_server(server_cache) as url:
        remote = _client(url).ask(STATE, QUESTIONS)
    local = SystemOne(compose_backend("lexical"), "loclab-lexical").ask(STATE, QUESTIONS)
    assert remote.answers == local.answers and remote.usage == local.usage


def test_429_then_200_is_retried_and_the_retry_is_logged(server_cache):
    with system_one_server(server_cache, "server.faults.fail_first=[429]") as url:
        system_one = _client(url)
        system_one.ask(STATE, QUESTIONS)
    assert system_one.totals().retries == 1 and system_one.totals().physical_calls == 1
    retries = [e for e in system_one.trace.events if e.data.get("system_one_event") == "retry"]
    assert len(retries) == 1 and "429" in retries[0].data["problem"]


def test_500_forever_fails_after_the_attempt_limit_with_the_message(server_cache):
    with system_one_server(server_cache, "server.faults.fail_rate=1.0", "server.faults.fail_status=500") as url:
        system_one = _client(url)
        with pytest.raises(SystemOneUnavailableError, match=r"failed after 3 attempts; last: status 500: injected fault 500"):
            system_one.ask(STATE, QUESTIONS)
    assert system_one.totals().retries == 2


def test_non_transient_status_fails_at_once(server_cache):
    with system_one_server(server_cache, "server.faults.fail_first=[400]") as url:
        system_one = _client(url)
        with pytest.raises(SystemOneUnavailableError, match="answered 400: injected fault 400"):
            system_one.ask(STATE, QUESTIONS)
    assert system_one.totals().retries == 0


@pytest.mark.parametrize(
    "corruption,message",
    [
        ("malformed_json", "not JSON"),
        ("missing_answer", "unanswered"),
        ("probability_out_of_range", r"answers\.file\.noul\.noul: Input should be less than or equal to 1"),
        ("choice_outside_criteria", "not among the options"),
    ],
)
def test_bad_answers_are_errors_never_defaults(server_cache, corruption, message):
    with system_one_server(server_cache, f"server.faults.corrupt={corruption}") as url:
        with pytest.raises((InvalidAnswerError, SystemOneUnavailableError), match=message):
            _client(url).ask(STATE, QUESTIONS)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_is_retried_then_reported():
    system_one = _client(f"http://127.0.0.1:{_free_port()}/v1/answer")
    with pytest.raises(SystemOneUnavailableError, match="transport error: ConnectError"):
        system_one.ask(STATE, QUESTIONS)
    assert system_one.totals().retries == 2


def test_timeout(server_cache):
    with system_one_server(server_cache, "server.faults.latency_ms=2000") as url:
        with pytest.raises(SystemOneUnavailableError, match="timed out after 0.2s"):
            _client(url, timeout_s=0.2, max_attempts=2).ask(STATE, QUESTIONS)


def test_an_endpoint_that_drips_a_byte_at_a_time_meets_the_request_s_total_deadline():
    """httpx's timeout is per read: a byte every 0.1 s never trips it. Each attempt has a total deadline."""
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def drip() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n")
                for _ in range(400):  # 40 s of a byte each 0.1 s, were it waited for
                    if stop.is_set():
                        return
                    try:
                        connection.sendall(b" ")
                    except OSError:
                        break
                    time.sleep(0.1)

    threading.Thread(target=drip, daemon=True).start()
    started = time.perf_counter()
    try:
        with pytest.raises(SystemOneUnavailableError, match="timed out after 0.5s"):  # read timeout or the deadline
            _client(f"http://127.0.0.1:{listener.getsockname()[1]}/v1/answer", timeout_s=0.5, max_attempts=2).ask(
                STATE, QUESTIONS)
    finally:
        stop.set()
        listener.close()
    assert time.perf_counter() - started < 5  # two attempts of 0.5 s and a back-off, not 40 s each


def test_bearer_key_is_required_and_never_in_errors(server_cache, monkeypatch):
    secret = "sk-loclab-test-0123456789"
    monkeypatch.setenv("LOCLAB_TEST_KEY", secret)
    with system_one_server(server_cache, "server.api_key_env=LOCLAB_TEST_KEY", env={"LOCLAB_TEST_KEY": secret}) as url:
        assert _client(url, api_key_env="LOCLAB_TEST_KEY").ask(STATE, QUESTIONS).answers
        monkeypatch.setenv("LOCLAB_TEST_KEY", "wrong-key")
        with pytest.raises(SystemOneUnavailableError, match="401") as info:
            _client(url, api_key_env="LOCLAB_TEST_KEY").ask(STATE, QUESTIONS)
    assert secret not in str(info.value) and "wrong-key" not in str(info.value)
    assert secret not in compose_backend("http", url=url, model="m", api_key_env="LOCLAB_TEST_KEY").identity


def test_server_side_cache_is_shared_by_clients(server_cache):
    with system_one_server(server_cache, "server.faults.latency_ms=0") as url:
        first, second = _client(url), _client(url)
        assert first.ask(STATE, QUESTIONS) == second.ask(STATE, QUESTIONS)
        import httpx

        stats = httpx.get(url.replace("/v1/answer", "/v1/stats")).json()
    assert (stats["backend_calls"], stats["cache_hits"]) == (1, 1)


def test_server_on_a_busy_port_says_so(server_cache):
    import subprocess
    import sys

    from experiments.job.paths import PROJECT_ROOT

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "experiments.serve_system_one", f"server.port={port}"],
                              cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr


def test_what_an_endpoint_echoes_of_the_key_is_redacted(monkeypatch):
    """A 401 that echoes the key's head and tail ("Incorrect API key provided: sk-lo…6789zz") reaches
    the error, and so error.txt, per_task, tags and logs, without either."""
    import json
    import threading

    key = "sk-loclab-test-0123456789zz"
    monkeypatch.setenv("LOCLAB_TEST_ECHO_KEY", key)
    echoed = f"Incorrect API key provided: {key[:5]}{'*' * 12}{key[-6:]}. You can find your API key at ..."
    body = json.dumps({"error": {"message": echoed, "type": "invalid_request_error"}}).encode()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def answer() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: "
                               + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)

    threading.Thread(target=answer, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/answer"
    try:
        with pytest.raises(SystemOneUnavailableError) as raised:
            _client(url, api_key_env="LOCLAB_TEST_ECHO_KEY").ask(STATE, QUESTIONS)
    finally:
        listener.close()
    message = str(raised.value)
    assert "answered 401" in message and "Incorrect API key provided" in message
    assert key[:5] not in message and key[-6:] not in message and "9zz" not in message[-200:].replace("***", "")

"""Probes: secrets. A bearer key and URL credentials reach the endpoint and nothing else: not
params, tags, logs, Hydra's saved config, the decision cache, results or error messages."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

import pytest

from experiments.job.system_one_process import system_one_server
from tests.experiments.cli import Workspace

pytestmark = pytest.mark.network

SECRET = "sk-loclab-never-logged-7f3a9c"
FAST = ("system_one.backend.max_attempts=2", "system_one.backend.backoff_initial_s=0.01")


@pytest.fixture
def ws(tmp_path, subject_cache):
    return Workspace(tmp_path / "ws", subject_cache)


def test_a_job_over_http_never_writes_the_key_anywhere(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("LOCLAB_TEST_KEY", SECRET)
    with system_one_server(tmp_path / "server-cache", "server.api_key_env=LOCLAB_TEST_KEY") as url:
        proc = ws.run("experiments.run", "system_one=http", f"system_one.backend.url={url}",
                      "system_one.backend.api_key_env=LOCLAB_TEST_KEY", "limit=2", *FAST)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs()
    assert job.data.metrics["6 tasks/ok"] == 2 and job.data.metrics["2 cost/model_calls"] > 0
    assert job.data.params["system_one.backend.api_key_env"] == "LOCLAB_TEST_KEY"
    written = [p for p in ws.root.rglob("*") if p.is_file()]
    assert len(written) > 10
    leaks = [str(p) for p in written if SECRET.encode() in p.read_bytes()]
    assert leaks == [] and SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize("launcher", ["serial", "parallel"])
def test_url_credentials_are_written_nowhere(ws, tmp_path, launcher):
    import socket

    user_secret, query_secret = "pw-loclab-marker-5e1d", "tok-loclab-marker-93ac"
    with socket.socket() as sock:  # a port nobody listens on: the second job fails, its error is recorded
        sock.bind(("127.0.0.1", 0))
        dead_port = sock.getsockname()[1]
    with system_one_server(tmp_path / "server-cache") as url:
        good = url.replace("http://", f"http://loclab:{user_secret}@") + f"?api_key={query_secret}"
        dead = f"http://loclab:{user_secret}@127.0.0.1:{dead_port}/v1/answer?token={query_secret}"
        proc = ws.run("experiments.run", f"sweep={launcher}", "system_one=http",
                      f"system_one.backend.url='{good}','{dead}'", "limit=1", "tracking.task_runs=true", *FAST,
                      multirun=True)
    assert proc.returncode != 0  # the dead endpoint's job failed
    jobs = ws.jobs()
    assert sorted(j.info.status for j in jobs) == ["FAILED", "FINISHED"]
    failed = next(j for j in jobs if j.info.status == "FAILED")
    # the endpoint is asked once, before any task, and the error says what to set or start
    error = failed.data.tags.get("loclab.error", "")
    assert "not reachable" in error and "LOCLAB_SYSTEM_ONE_URL" in error and "***" in error
    assert all("***@" in j.data.params["system_one.backend.url"] for j in jobs)
    written = [p for p in [*ws.root.rglob("*"), *ws.subject_cache.rglob("*.sqlite*")] if p.is_file()]
    assert any(p.name == "multirun.yaml" for p in written) and any(p.suffix == ".log" for p in written)
    for marker in (user_secret, query_secret):
        leaks = [str(p) for p in written if marker.encode() in p.read_bytes()]
        assert leaks == [] and marker not in proc.stdout + proc.stderr



def test_a_key_with_a_trailing_newline_is_used_stripped_and_written_nowhere_in_any_form(ws, tmp_path, monkeypatch):
    """`echo key > file; export KEY=$(cat file)` style keys keep a newline: the header cannot carry it
    (httpx would raise with the key in its message), so it is stripped, and every form is redacted."""
    monkeypatch.setenv("LOCLAB_TEST_KEY", SECRET + "\n")
    monkeypatch.setenv("LOCLAB_WRONG_KEY", "sk-wrong-never-logged-41bd\n")
    with system_one_server(tmp_path / "server-cache", "server.api_key_env=LOCLAB_TEST_KEY") as url:
        ok = ws.run("experiments.run", "system_one=http", f"system_one.backend.url={url}",
                    "system_one.backend.api_key_env=LOCLAB_TEST_KEY", "limit=1", *FAST)
        refused = ws.run("experiments.run", "system_one=http", f"system_one.backend.url={url}",
                         "system_one.backend.api_key_env=LOCLAB_WRONG_KEY", "limit=1", "force=true",
                         "system_one.cache.enabled=false", *FAST)
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert refused.returncode != 0 and sorted(j.info.status for j in ws.jobs()) == ["FAILED", "FINISHED"]
    written = [p for p in ws.root.rglob("*") if p.is_file()]
    for secret in (SECRET, "sk-wrong-never-logged-41bd"):
        leaks = [str(p) for p in written if secret.encode() in p.read_bytes()]
        assert leaks == [] and secret not in ok.stdout + ok.stderr + refused.stdout + refused.stderr


KEY = 'sk/abc+12"3456'  # characters that every escaping changes


@pytest.mark.parametrize("written", [f"Bearer {KEY}\n!", repr(KEY + "\n"), json.dumps(KEY + "\n"),
                                     f"key={quote(KEY + chr(10), safe='')}", f"key={quote_plus(KEY)}"])
def test_every_written_form_of_a_registered_secret_is_redacted(written, monkeypatch):
    from locator import redact as module
    monkeypatch.setattr(module, "_SECRETS", [])
    monkeypatch.setenv("LOCLAB_PROBE_KEY", KEY + "\n")
    assert module.secret_from_env("LOCLAB_PROBE_KEY") == KEY
    assert "abc" not in module.redact(written) and module.REDACTED in module.redact(written)


def test_a_query_parameter_named_like_a_secret_is_redacted_but_mlflow_s_shared_view_is_not():
    from locator.redact import REDACTED, redact

    assert redact("http://h/v1?api_key=abc&Token=def&x=1") == f"http://h/v1?api_key={REDACTED}&Token={REDACTED}&x=1"
    view = "http://127.0.0.1:5000/#/experiments/1/runs?viewStateShareKey=5b4b6b9b"  # a view's name, no credential
    assert redact(view) == view and redact(view + "&sharekey=abc").endswith(f"&sharekey={REDACTED}")

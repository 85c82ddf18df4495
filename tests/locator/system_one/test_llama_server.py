"""The real endpoint, for real: llama.cpp's own OpenAI-compatible server (`llama-server`, built by
`scripts/build_llama_server.sh`) on 127.0.0.1 with the same GGUF file the embedded backend loads
(Qwen2.5-Coder-0.5B-Instruct Q4_K_M). `system_one=openai_logprobs` against it answers the same
requests as `system_one=local_llm` in-process, and a two_phase job runs through it end to end.

Why the two differ at all, and by how much (measured below): llama.cpp multiplies with the
quantized Q4_K/Q6_K blocks, while transformers dequantizes them to float32 once; a label's
probability moves by a few points, and the answer (the argmax) stays."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from experiments.job.config import compose_config
from experiments.job.system_one_process import LLAMA_SERVER_BUILD, llama_cpp_server, llama_server_binary
from locator.system_one.local_llm import assemble
from locator.system_one.wire import Request
from tests.configs import backend as compose_backend
from tests.experiments.cli import Workspace
from tests.locator.system_one.test_local_llm import COMPAT, FORMATTING, HAS_MODEL, LEVELS, NEXT, TASK

# .ci/run compiles llama-server beside the suite, at the lowest priority, and names here the file its exit
# status lands in: these tests are handed out last (tests/conftest.py) and wait for it, so the compile
# takes the cores the suite leaves idle instead of 4 minutes before the first test
BUILD_STATUS_ENV = "LOCLAB_LLAMA_SERVER_BUILD_STATUS"
BUILD_WAIT_S = 2400
pytestmark = [
    pytest.mark.skipif(not HAS_MODEL, reason="the llm extra is not installed: LOCLAB_EXTRAS=test,llm bash scripts/setup.sh"),
    pytest.mark.after_build,
]
# the served (quantized) and the embedded (dequantized float32) model: how far a probability may move
PROBABILITY_TOLERANCE = 0.05  # measured: at most 0.018 on these questions


@pytest.fixture(scope="module")
def binary() -> Path:
    """The built server: found, or waited for while the build that CI started beside the suite runs
    (a failed build fails these tests with its log), else these tests skip, saying how to build it."""
    status = os.environ.get(BUILD_STATUS_ENV)
    if llama_server_binary() is None and status:
        deadline = time.monotonic() + BUILD_WAIT_S
        while not Path(status).is_file() and time.monotonic() < deadline:
            time.sleep(2)
        code = Path(status).read_text().strip() if Path(status).is_file() else "still running"
        if code != "0":
            log = Path(f"{status}.log")
            pytest.fail(f"the llama-server build CI started ended {code}:\n"
                        f"{log.read_text(errors='replace')[-3000:] if log.is_file() else ''}")
    built = llama_server_binary()
    if built is None or not built.is_file():
        pytest.skip(f"llama.cpp's server is not built: {LLAMA_SERVER_BUILD} (about 4 minutes)")
    return built


@pytest.fixture(scope="module")
def gguf():
    so = compose_config("system_one=local_llm").system_one.backend
    return assemble(list(so.packages), so.sha256, __import__("pathlib").Path(so.cache_dir), so.extra)


@pytest.fixture(scope="module")
def served(binary, gguf):
    with llama_cpp_server(binary, gguf, threads=compose_config("system_one=local_llm").system_one.backend.threads) as url:
        yield url


def test_the_served_model_answers_the_same_requests_as_the_embedded_one(served):
    questions = {"formatting": FORMATTING, "compat": COMPAT, "next": NEXT, "levels": LEVELS}
    request = Request(state={"task": TASK}, model="qwen", questions=questions)
    embedded = compose_backend("local_llm").answer(request)
    remote = compose_backend("openai_logprobs", base_url=served, model="qwen", max_attempts=1).answer(request)
    for key in ("formatting", "compat"):
        assert remote.answers[key].noul == pytest.approx(embedded.answers[key].noul, abs=PROBABILITY_TOLERANCE), key
    assert remote.answers["next"].choice == embedded.answers["next"].choice
    for option, p in embedded.answers["next"].probabilities.items():
        assert remote.answers["next"].probabilities[option] == pytest.approx(p, abs=PROBABILITY_TOLERANCE), option
    assert remote.answers["levels"].probabilities == pytest.approx(embedded.answers["levels"].probabilities,
                                                                   abs=PROBABILITY_TOLERANCE)
    # the same prompts: the server counts the tokens of the same chat the embedded tokenizer encodes
    # and one generated token per chat call, a choice asked twice
    assert (remote.usage.input_tokens, remote.usage.output_tokens) == (embedded.usage.input_tokens, embedded.usage.output_tokens)
    # both reuse what their prompts share (the system prompt, the task text), each counting its own: the
    # server's one slot keeps the prompt before, in the order the concurrent calls reached it
    assert 0 < remote.usage.cached_input_tokens < remote.usage.input_tokens
    assert 0 < embedded.usage.cached_input_tokens < embedded.usage.input_tokens


def test_a_two_phase_job_runs_through_the_real_server(served, tmp_path, subject_cache):
    """The whole path, kept small (two files handed off, one round each): the seed's budget took 15
    requests and 40,000 prompt tokens, past the job's 10-minute limit when two suites shared the cores."""
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = ws.run("experiments.run", "system_one=openai_logprobs", f"system_one.backend.base_url={served}",
                  "system_one.model=qwen2.5-coder-0.5b-instruct-q4_k_m", "system_one.max_concurrency=1",
                  "system_one.backend.parallel_questions=1", "tasks=[demo-click-001]",
                  "locator.discovery.max_files=2", "locator.reader.budget.soft_rounds=1",
                  "locator.reader.budget.hard_rounds=1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs()
    assert job.info.status == "FINISHED" and job.data.metrics["6 tasks/ok"] == 1
    assert job.data.metrics["2 cost/model_calls"] > 0 and job.data.metrics["2 cost/input_tokens"] > 1000
    assert 0 < job.data.metrics["2 cost/physical_cached_input_tokens"] < job.data.metrics["2 cost/physical_input_tokens"]
    assert "qwen2.5-coder-0.5b" in job.data.tags["loclab.decided_by"]
    assert served.replace("http://", "") in job.data.tags["loclab.system_one_identity"]

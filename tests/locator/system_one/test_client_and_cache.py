from __future__ import annotations

import pytest
from pydantic import ValidationError

from locator.system_one.cache import DecisionCache, DecisionCacheError
from locator.system_one.client import SystemOne
from locator.system_one.wire import (
    ChoiceAnswer, InvalidAnswerError, NoulAnswer, Question, Request, Response, ScoreAnswer, Usage, validate_response,
)
from locator.trace import EventKind, Trace
from tests.configs import backend as compose_backend
from tests.configs import locator as compose_locator
from tests.locator.configured import has_llm_extra

STATE = {"task": "parse_wheel_filename rejects names"}
QUESTIONS = {"q": Question(type="noul", instructions="i", criteria="packaging/utils.py")}


class CountingBackend:
    """The real lexical backend, counting how often it is reached."""

    def __init__(self, **params):
        self.lexical = compose_backend("lexical", **params)
        self.identity = self.lexical.identity
        self.calls = 0

    def answer(self, request):
        self.calls += 1
        return self.lexical.answer(request)


def test_cache_serves_identical_requests_and_counts_logical_vs_physical(tmp_path):
    backend = CountingBackend()
    cache = DecisionCache(tmp_path / "decisions.sqlite")
    arm_a, arm_b = SystemOne(backend, "m", cache), SystemOne(backend, "m", cache)
    first = arm_a.ask(STATE, QUESTIONS)
    second = arm_b.ask(STATE, QUESTIONS)
    assert first == second and backend.calls == 1
    a, b = arm_a.totals(), arm_b.totals()
    assert (a.logical_calls, a.physical_calls, a.cache_misses) == (1, 1, 1)
    assert (b.logical_calls, b.physical_calls, b.cache_hits) == (1, 0, 1)
    assert b.logical_input_tokens == a.logical_input_tokens > 0 and b.physical_input_tokens == 0


class PrefixCachingBackend(CountingBackend):
    """The lexical answers, with the usage a model backend gives: of its input, 3 tokens its prefix cache held."""

    def answer(self, request):
        response = super().answer(request)
        return response.model_copy(update={"usage": response.usage.model_copy(update={"cached_input_tokens": 3})})


def test_the_input_a_backend_prefix_cache_held_is_counted_where_the_call_was_physical(tmp_path):
    cache = DecisionCache(tmp_path / "decisions.sqlite")
    asked, reused = SystemOne(PrefixCachingBackend(), "m", cache), SystemOne(PrefixCachingBackend(), "m", cache)
    asked.ask(STATE, QUESTIONS)
    reused.ask(STATE, QUESTIONS)  # the decision cache answers: nothing reached a backend, nothing was encoded
    assert asked.totals().physical_cached_input_tokens == 3 and reused.totals().physical_cached_input_tokens == 0


class TruncatingBackend(CountingBackend):
    """The lexical answers, reporting as local_llm does that it cut each question's prompt to fit."""

    def answer(self, request):
        from locator.system_one.events import notify

        for _ in request.questions:
            notify("truncated_prompt", tokens=64, limit=64)
        return super().answer(request)


def test_a_prompt_the_backend_cut_is_counted_where_the_call_was_physical_and_traced(tmp_path):
    cache = DecisionCache(tmp_path / "decisions.sqlite")
    trace = Trace()
    asked = SystemOne(TruncatingBackend(), "m", cache, trace=trace)
    reused = SystemOne(TruncatingBackend(), "m", cache)
    asked.ask(STATE, QUESTIONS | {"r": QUESTIONS["q"]})
    reused.ask(STATE, QUESTIONS | {"r": QUESTIONS["q"]})
    assert asked.totals().truncated_prompts == 2 and reused.totals().truncated_prompts == 0
    assert sum(e.data.get("system_one_event") == "truncated_prompt" for e in trace.events) == 2


def test_a_tasks_result_counts_the_prompts_its_backend_cut(tmp_path):
    from locator.repository import RepositoryView
    from locator.runtime import localize
    from locator.task import SubjectIdentity, Task

    (tmp_path / "a.py").write_text("def parse_wheel_filename(name):\n    return name\n")
    task = Task(id="t", text=STATE["task"], subject=SubjectIdentity(repository="r", revision="v"))
    locator = compose_locator("two_phase", discovery={"file_threshold": 0.0}, reader={"action_threshold": 0.0})
    client = SystemOne(TruncatingBackend(), "m")
    result = localize(locator, task, RepositoryView(tmp_path), client, Trace())
    assert result.cost.physical.truncated_prompts == client.totals().truncated_prompts > 0


def test_a_usage_that_cached_more_than_its_input_is_refused():
    with pytest.raises(ValidationError, match="cached_input_tokens 9 exceeds input_tokens 4"):
        Usage(input_tokens=4, output_tokens=1, cached_input_tokens=9)


def test_cache_is_shared_across_connections_and_keyed_on_backend_identity(tmp_path):
    path = tmp_path / "decisions.sqlite"
    SystemOne(compose_backend("lexical"), "m", DecisionCache(path)).ask(STATE, QUESTIONS)
    other_process_view = DecisionCache(path)
    assert len(other_process_view) == 1
    backend = CountingBackend()
    SystemOne(backend, "m", other_process_view).ask(STATE, QUESTIONS)
    assert backend.calls == 0
    changed = CountingBackend(scale=5.0)
    SystemOne(changed, "m", other_process_view).ask(STATE, QUESTIONS)
    assert changed.calls == 1 and len(other_process_view) == 2


def test_without_cache_every_call_is_physical():
    system_one = SystemOne(CountingBackend(), "m")
    system_one.ask(STATE, QUESTIONS)
    system_one.ask(STATE, QUESTIONS)
    totals = system_one.totals()
    assert (totals.logical_calls, totals.physical_calls, totals.cache_hits, totals.cache_misses) == (2, 2, 0, 0)


def test_requests_and_answers_are_traced():
    trace = Trace()
    SystemOne(compose_backend("lexical"), "m", trace=trace).ask(STATE, QUESTIONS)
    assert [e.kind for e in trace.events] == [EventKind.REQUEST, EventKind.ANSWER]


def _req(**questions):
    return Request(state=STATE, model="m", questions=questions)


USAGE = Usage(input_tokens=1, output_tokens=1)


def test_validation_rejects_missing_and_mistyped_answers():
    request = _req(a=Question(type="noul", instructions="i"), b=Question(type="choice", instructions="i", criteria=["x", "y"]))
    with pytest.raises(InvalidAnswerError, match="unanswered"):
        validate_response(request, Response(model="m", answers={"a": NoulAnswer(noul=0.5)}, usage=USAGE))
    with pytest.raises(InvalidAnswerError, match="asked choice"):
        validate_response(request, Response(model="m", answers={"a": NoulAnswer(noul=0.5), "b": NoulAnswer(noul=0.5)}, usage=USAGE))
    with pytest.raises(InvalidAnswerError, match="not among the options"):
        validate_response(request, Response(model="m", answers={"a": NoulAnswer(noul=0.5),
                                                                "b": ChoiceAnswer(choice="z", probabilities={"x": 1.0})}, usage=USAGE))
    score_request = _req(s=Question(type="score", instructions="i", criteria=["lo", "hi"]))
    with pytest.raises(InvalidAnswerError, match="levels"):
        validate_response(score_request, Response(model="m", answers={"s": ScoreAnswer(probabilities=[1.0])}, usage=USAGE))


def test_out_of_range_probability_is_a_wire_error():
    with pytest.raises(ValidationError):
        Response.model_validate({"model": "m", "answers": {"a": {"type": "noul", "noul": 1.7}}, "usage": {"input_tokens": 1, "output_tokens": 1}})


def test_questions_must_fit_their_type():
    with pytest.raises(ValidationError):
        Question(type="choice", instructions="i")
    with pytest.raises(ValidationError):
        Question(type="score", instructions="i", criteria=["only one"])


def test_price_table_gives_billed_and_logical_cost(tmp_path):
    from locator.repository import RepositoryView
    from locator.runtime import localize
    from locator.system_one.client import Pricing
    from locator.task import SubjectIdentity, Task

    (tmp_path / "a.py").write_text("def parse_wheel_filename(name):\n    return name\n")
    task = Task(id="t", text=STATE["task"], subject=SubjectIdentity(repository="r", revision="v"))
    locator = compose_locator("two_phase", discovery={"file_threshold": 0.0}, reader={"action_threshold": 0.0})
    cache = DecisionCache(tmp_path / "c.sqlite")
    pricing = Pricing(input_per_million_usd=2.0, output_per_million_usd=10.0)
    runs = [localize(locator, task, RepositoryView(tmp_path), SystemOne(compose_backend("lexical"), "m", cache, pricing=pricing), Trace())
            for _ in range(2)]
    first, second = (r.cost for r in runs)
    assert first.usd == pytest.approx((first.tokens.input * 2 + first.tokens.output * 10) / 1e6)
    assert first.physical.usd == first.usd and second.physical.usd == 0 and second.usd == first.usd
    unpriced = localize(locator, task, RepositoryView(tmp_path), SystemOne(compose_backend("lexical"), "m"), Trace())
    assert unpriced.cost.usd is None and unpriced.cost.physical.usd is None


@pytest.mark.skipif(not has_llm_extra(), reason="the llm extra is not installed: LOCLAB_EXTRAS=test,llm bash scripts/setup.sh")
def test_a_generation_is_cached_metered_and_traced_like_a_decision(tmp_path):
    trace = Trace()
    client = SystemOne(compose_backend("local_llm"), "qwen", cache=DecisionCache(tmp_path / "c.sqlite"), trace=trace)
    messages = [{"role": "user", "content": "Name one Python keyword."}]
    first, second = client.generate(messages, 4), client.generate(messages, 4)
    assert first == second and first.text and first.usage.output_tokens <= 4
    totals = client.totals()
    assert (totals.logical_calls, totals.physical_calls, totals.cache_hits) == (2, 1, 1)
    assert [e.data["cached"] for e in trace.events if e.kind == "answer"] == [False, True]


def _filled(path, entries: int = 40) -> DecisionCache:
    """A cache of ~10 pages (a commit each: a fsync)."""
    cache = DecisionCache(path)
    answer = SystemOne(compose_backend("lexical"), "m" * 1000).ask(STATE, QUESTIONS)
    for i in range(entries):
        cache.put(f"key-{i}", "lexical", answer)
    return cache


def test_a_truncated_cache_is_an_error_naming_its_file_not_sqlites_bare_message(tmp_path):
    path = tmp_path / "decisions.sqlite"
    _filled(path).close()
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)
    with pytest.raises(DecisionCacheError, match=f"decision cache {path}: .*move the file aside"):
        DecisionCache(path)


def test_a_cache_damaged_while_in_use_is_named_by_the_next_open_and_the_next_failing_statement(tmp_path):
    import os
    import sqlite3

    path = tmp_path / "decisions.sqlite"
    in_use = _filled(path)
    in_use._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as f:  # garbled by something else while the job holds it open
        f.seek(path.stat().st_size // 2)
        f.write(os.urandom(path.stat().st_size // 4))
    with pytest.raises(DecisionCacheError, match=rf"decision cache {path}: damaged \(Page \d+"):
        DecisionCache(path)  # the next job, or another process of the sweep
    other = sqlite3.connect(path)
    other.execute("PRAGMA writable_schema=ON")
    other.execute("DELETE FROM sqlite_master WHERE name = 'decisions'")
    other.commit()
    with pytest.raises(DecisionCacheError, match=f"decision cache {path}: "):
        SystemOne(compose_backend("lexical"), "m", in_use).ask({"task": "a new question"}, QUESTIONS)


def test_a_request_is_labelled_by_what_it_is_about_in_words():
    """A trace's span names say what each request was about; a reading of several files says how many
    more in words (`+3` read as a count of nothing; issue 49, point 8)."""
    from locator.system_one.client import request_label

    assert request_label({"stage": "file_runtime", "file": {"path": "pkg/core.py", "epoch": 3}}) == "file_runtime pkg/core.py epoch 3"
    assert request_label({"stage": "reading", "reader": {"pkg/a.py": {}, "pkg/b.py": {}, "pkg/c.py": {}}}) == \
        "reading pkg/a.py and 2 more files"
    assert request_label({"stage": "reading", "reader": {"pkg/a.py": {}, "pkg/b.py": {}}}) == "reading pkg/a.py and 1 more file"
    assert request_label({"stage": "reading", "reader": {"pkg/a.py": {}}}) == "reading pkg/a.py"

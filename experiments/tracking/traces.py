"""System One calls as MLflow traces: the Traces tab shows one trace per task, one span per request
with its questions, answers, tokens and latency. `trace.jsonl` stays the raw record; the traces are
built from it after the task, so tracing never sits on the localization's path."""

from __future__ import annotations

import json
import time
from collections import defaultdict, deque
from pathlib import Path

import mlflow
from mlflow.entities import SpanType
from mlflow.tracing.constant import SpanAttributeKey

from locator.redact import redact, redact_value
from locator.trace import EventKind, read_trace
from experiments.tracking.vocabulary import Tag



def _set_json(span, key: str, value: dict) -> None:
    """A span's inputs or outputs as the JSON object MLflow stores (the UI's Pretty view folds it), encoded
    by json's C encoder: MLflow's own `set_inputs` walks nested values in Python (6 s for a 50-task job,
    the slowest part of logging), and given the text instead stored a JSON string the UI cannot fold."""
    span._span.set_attribute(key, json.dumps(value, ensure_ascii=False))


def log_task_trace(task_id: str, repeat: int, trace_file: Path, setting: str, metadata: dict[str, str]) -> int:
    """Logs the task's System One requests as one MLflow trace, attached to the active run (MLflow
    finds it from any thread, so a task's thread may call this), tagged with one tag, the job's
    `setting` (its run name: the traces list shows one tag chip), with `metadata` (the job run, its
    locator and overrides); returns the spans logged. A request is paired with the answer that
    carries its decision key; its span is named for what it was about (stage, file, epoch) and
    carries its token usage where MLflow counts it (the list's Tokens column)."""
    events = read_trace(trace_file)
    requests = [e for e in events if e.kind == EventKind.REQUEST]
    if not requests:
        return 0
    answers: dict[str, deque] = defaultdict(deque)
    for event in events:
        if event.kind == EventKind.ANSWER:
            answers[event.data.get("key")].append(event)
    end_ms = max(e.t_ms for e in events)
    base_ns = time.time_ns() - int(end_ms * 1e6)  # the trace keeps the task's own timing, placed just before now
    root = mlflow.start_span_no_context(f"{task_id}/r{repeat}", span_type=SpanType.CHAIN,
                                        inputs={"task": task_id, "repeat": repeat}, start_time_ns=base_ns,
                                        tags={Tag.SETTING: redact(setting)[:4000]},
                                        metadata={k: redact(v)[:4000] for k, v in metadata.items()})
    spans = 0
    for request in requests:
        answer = answers[request.data.get("key")].popleft() if answers[request.data.get("key")] else None
        questions = request.data.get("questions", {})
        span = mlflow.start_span_no_context(
            request.data.get("about") or "system_one.request", span_type=SpanType.LLM, parent_span=root,
            attributes={"decision_key": str(request.data.get("key"))}, start_time_ns=base_ns + int(request.t_ms * 1e6))
        _set_json(span, SpanAttributeKey.INPUTS, {"question_count": len(questions), "questions": redact_value(questions)})
        if answer is None:
            span.end(status="ERROR", end_time_ns=base_ns + int(end_ms * 1e6))
        else:
            usage = answer.data.get("usage") or {}
            _set_json(span, SpanAttributeKey.OUTPUTS, {"answers": answer.data.get("answers", {})})
            tokens = {k: int(usage.get(k) or 0) for k in ("input_tokens", "output_tokens")}
            span.end(attributes={"cached": bool(answer.data.get("cached")), "model": str(answer.data.get("model")),
                                 "latency_ms": round(answer.t_ms - request.t_ms, 3),
                                 SpanAttributeKey.CHAT_USAGE: tokens | {"total_tokens": sum(tokens.values())}},
                     end_time_ns=base_ns + int(answer.t_ms * 1e6))
        spans += 1
    root.end(outputs={"requests": spans, "about": sorted({r.data.get("about") or "request" for r in requests})},
             end_time_ns=base_ns + int(end_ms * 1e6))
    return spans


def flush_traces() -> None:
    """Every span of the job written to the store, without MLflow's flush stall. Its
    `flush_trace_async_logging` stops each exporter's export-queue consumer and joins it, and that
    thread sleeps up to a second in `Queue.get(timeout=1)` before it sees the stop, once per exporter
    (a job's `set_experiment` makes one each): measured, a 9-job sweep took 30.4 s against 18.0 s
    with the export made synchronous, the same CPU. Here the batch processors hand their spans to
    their exporters (MLflow's own first layer), then this waits until each export queue's every task
    is done, which wakes as the last one ends; the consumers go on for the next job's traces. MLflow's
    own flush still runs at interpreter exit. Private to MLflow 3.17.2 (pinned); a test counts every
    span of a job in the store when the job has ended."""
    from mlflow.tracing.processor import base_mlflow

    with base_mlflow._batch_processor_registry_lock:
        processors = list(base_mlflow._batch_processor_registry)
    for processor in processors:
        with processor._pending_on_end_condition:
            processor._pending_on_end_condition.wait_for(lambda: processor._pending_on_end_count == 0, timeout=30)
        processor.force_flush(30_000)
    for processor in processors:
        queue = getattr(processor.span_exporter, "_async_queue", None)
        if queue is not None and queue.is_active():
            queue._queue.join()  # a queue.Queue: task_done after each export task

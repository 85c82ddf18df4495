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

from locator.redact import redact
from locator.trace import EventKind, read_trace


def log_task_trace(task_id: str, repeat: int, trace_file: Path, tags: dict[str, str]) -> int:
    """Logs the task's System One requests as one MLflow trace, attached to the active run (MLflow
    finds it from any thread, so a task's thread may call this) and tagged with `tags` (the job run
    and its overrides); returns the spans logged. A request is paired with the answer that carries its
    decision key; its span is named for what it was about (stage, file, epoch)."""
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
                                        tags={k: redact(v)[:4000] for k, v in tags.items()})
    spans = 0
    for request in requests:
        answer = answers[request.data.get("key")].popleft() if answers[request.data.get("key")] else None
        questions = request.data.get("questions", {})
        span = mlflow.start_span_no_context(
            request.data.get("about") or "system_one.request", span_type=SpanType.LLM, parent_span=root,
            # JSON text, not nested objects: MLflow walks nested span inputs value by value, which made
            # tracing the slowest part of logging (6 s for a 50-task job); the UI shows the text as is.
            # Compact, because `indent` takes json's pure-Python encoder (0.9 s of a 50-task job).
            inputs={"question_count": len(questions), "question_types": sorted({q.get("type") for q in questions.values()}),
                    "questions": redact(json.dumps(questions, ensure_ascii=False))},
            attributes={"decision_key": str(request.data.get("key"))},
            start_time_ns=base_ns + int(request.t_ms * 1e6))
        if answer is None:
            span.end(status="ERROR", end_time_ns=base_ns + int(end_ms * 1e6))
        else:
            usage = answer.data.get("usage") or {}
            span.end(outputs={"answers": json.dumps(answer.data.get("answers", {}))},
                     attributes={"cached": bool(answer.data.get("cached")), "model": str(answer.data.get("model")),
                                 "input_tokens": usage.get("input_tokens"), "output_tokens": usage.get("output_tokens"),
                                 "latency_ms": round(answer.t_ms - request.t_ms, 3)},
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

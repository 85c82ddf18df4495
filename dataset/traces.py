"""Trace-to-code tasks: the observed failure output of a problem statement becomes the task input.

`extract_trace` is deterministic: every `Traceback (most recent call last)` block (its frames and
the exception lines after them, chained blocks included) in order; without one, a Rust panic with its
backtrace; without one, every Java or JavaScript/TypeScript exception line with its `at …` frames and
every Go `panic:` with its goroutines; without any, every line naming an exception with a message
(`...Error: ...`, `...Exception: ...`), deduplicated in order. The result is
cut at a line boundary to `max_bytes` (UTF-8). Rules and counts: `datasets/swebench_lite_pypi_traces.md`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from dataset.gold import GOLD_RULE
from dataset.manifest import Manifest, ManifestError, ManifestRow, build_manifest, load_manifest
from dataset.swebench import load_swebench

TRACEBACK_HEAD = "Traceback (most recent call last)"
_ERROR_LINE = re.compile(r"\b[A-Z]\w*(?:Error|Exception):")
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")


class TraceKind(StrEnum):
    TRACEBACK = "traceback"  # at least one full `Traceback (most recent call last)` block
    ERROR_LINE = "error_line"  # no traceback, only lines naming an exception with a message
    PANIC = "panic"  # a Rust panic (`thread '…' panicked at`), with its stack backtrace when printed
    STACK = "stack"  # a Java or JavaScript/TypeScript exception with its `at …` frames, or a Go panic with its goroutines


_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at ")
_BACKTRACE_LINE = re.compile(r"^\s+(?:\d+: |at )|^note: ")


# a Java/V8 frame, Java's `... 3 more` and `Caused by:`/`Suppressed:` chain lines
_AT_FRAME = re.compile(r"^\s+at \S|^\s*\.\.\. \d+ more$|^\s*(?:Caused by|Suppressed): ")
_GO_PANIC = re.compile(r"^panic: ")
_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]]+\]:$")
_GO_FRAME = re.compile(r"^\t\S|^\S+\(.*\)$|^created by \S")  # `pkg.(*T).f(…)`, then its tab-indented `file:line`


def _stack_blocks(lines: list[str]) -> list[str]:
    """Each exception line directly followed by `at …` frames (Java, V8) with those frames, and each Go
    `panic:` with its goroutines' frames (Go prints a blank line between them)."""
    blocks, i = [], 0
    while i < len(lines):
        line = lines[i].rstrip()
        if _GO_PANIC.match(line):
            block, j = [line], i + 1
            while j < len(lines) and (lines[j].strip() == "" or _GO_PANIC.match(lines[j]) or "[recovered]" in lines[j]):
                j += 1  # Go's blank separator (and a re-panic's lines) before the goroutines
            while j < len(lines) and _GOROUTINE.match(lines[j].strip()):
                block.append(lines[j].strip())
                j += 1
                while j < len(lines) and _GO_FRAME.match(lines[j].rstrip()):
                    block.append(lines[j].rstrip())
                    j += 1
                while j < len(lines) and not lines[j].strip() and j + 1 < len(lines) and _GOROUTINE.match(lines[j + 1].strip()):
                    j += 1
            if len(block) > 1:
                blocks.append("\n".join(block))
                i = j
                continue
        if line.strip() and not _AT_FRAME.match(line) and i + 1 < len(lines) and _AT_FRAME.match(lines[i + 1]):
            block, j = [line.strip()], i + 1
            while j < len(lines) and _AT_FRAME.match(lines[j]):
                block.append(lines[j].rstrip())
                j += 1
            blocks.append("\n".join(block))
            i = j
            continue
        i += 1
    return blocks


def _panic_block(lines: list[str]) -> str | None:
    """From the first `panicked at` line: the message (to a `stack backtrace:` line, else to the first
    blank line) and the backtrace's frames."""
    start = next((i for i, line in enumerate(lines) if _PANIC.match(line.strip())), None)
    if start is None:
        return None
    backtrace = next((i for i in range(start, len(lines)) if lines[i].strip() == "stack backtrace:"), None)
    if backtrace is None:
        end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
        return "\n".join(line.rstrip() for line in lines[start:end])
    end = backtrace + 1
    while end < len(lines) and _BACKTRACE_LINE.match(lines[end]):
        end += 1
    return "\n".join(line.rstrip() for line in lines[start:end])


@dataclass(frozen=True)
class ExtractedTrace:
    kind: TraceKind
    text: str
    truncated: bool


def _traceback_blocks(lines: list[str]) -> list[str]:
    blocks, i = [], 0
    while i < len(lines):
        if TRACEBACK_HEAD not in lines[i]:
            i += 1
            continue
        block = [lines[i][lines[i].index(TRACEBACK_HEAD):]]
        i += 1
        while i < len(lines) and lines[i][:1] in (" ", "\t") and lines[i].strip():  # the frames
            block.append(lines[i].rstrip())
            i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith("```") \
                and TRACEBACK_HEAD not in lines[i]:  # the exception lines
            block.append(lines[i].rstrip())
            i += 1
        blocks.append("\n".join(block))
        # a chained traceback keeps its "During handling ..." line between the blocks
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines) and lines[j].strip().startswith(_CHAIN):
            blocks.append(lines[j].strip())
            i = j + 1
    return blocks


def _cut(text: str, max_bytes: int) -> tuple[str, bool]:
    if len(text.encode("utf-8")) <= max_bytes:
        return text, False
    kept, size = [], 0
    for line in text.split("\n"):
        size += len(line.encode("utf-8")) + 1
        if size > max_bytes:
            break
        kept.append(line)
    return "\n".join(kept), True


def extract_trace(problem_statement: str, max_bytes: int) -> ExtractedTrace | None:
    """The failure trace of a problem statement, or None when it shows no failure output."""
    lines = problem_statement.replace("\r\n", "\n").split("\n")
    blocks = _traceback_blocks(lines)
    panic = None if blocks else _panic_block(lines)
    stacks = [] if blocks or panic is not None else _stack_blocks(lines)
    if blocks:
        kind, text = TraceKind.TRACEBACK, "\n\n".join(blocks)
    elif panic is not None:
        kind, text = TraceKind.PANIC, panic
    elif stacks:
        kind, text = TraceKind.STACK, "\n\n".join(stacks)
    else:
        found = list(dict.fromkeys(line.strip() for line in lines if _ERROR_LINE.search(line)))
        if not found:
            return None
        kind, text = TraceKind.ERROR_LINE, "\n".join(found)
    text, truncated = _cut(text, max_bytes)
    return ExtractedTrace(kind, text, truncated)


def load_swebench_traces(path: str | Path, name: str, version: str, description: str, max_trace_bytes: int,
                         git_mirrors: str | None, clone_url: str | None, cache_dir: str | Path,
                         path_setting: str = "dataset.loader.path", languages: list[str] | None = None) -> Manifest:
    """The SWE-bench rows whose problem statement carries failure output, the trace as the task text
    (subjects and declared languages as `load_swebench` gives them)."""
    if max_trace_bytes < 1:
        raise ManifestError(f"dataset {name}: max_trace_bytes must be >= 1, got {max_trace_bytes}")
    source = load_swebench(path, name, version, description, git_mirrors, clone_url, cache_dir, path_setting,
                           languages=languages)
    rows = []
    for row in source.rows:
        trace = extract_trace(row.task.text, max_trace_bytes)
        if trace is None:
            continue
        if not trace.text.strip():
            raise ManifestError(f"{path}: task {row.task.id}: field problem_statement: its trace's first line "
                                f"is longer than max_trace_bytes ({max_trace_bytes})")
        metadata = row.task.metadata | {"input": "failure_trace", "trace_kind": trace.kind.value,
                                        "trace_truncated": trace.truncated,
                                        "problem_statement_chars": len(row.task.text)}
        task = row.task.model_copy(update={"text": trace.text, "metadata": metadata})
        rows.append(ManifestRow(task=task, subject=row.subject, gold=row.gold))
    if not rows:
        raise ManifestError(f"{path}: none of its {len(source.rows)} rows has a failure trace in its problem statement "
                            f"(a traceback or an error line), so the trace set {name} holds no task")
    return build_manifest(name, version, description, GOLD_RULE, rows, str(path))


def load_trace_tasks(path: str | Path, name: str) -> Manifest:
    """The trace-to-code tasks (`metadata.input: failure_trace`) of a manifest, as their own task set."""
    source = load_manifest(Path(path))
    rows = [r for r in source.rows if r.task.metadata.get("input") == "failure_trace"]
    if not rows:
        raise ManifestError(f"{path}: no task has metadata.input = failure_trace")
    header = source.header
    return build_manifest(name, header.version, f"the trace-to-code tasks of {header.name}: {header.description}",
                          header.gold_rule, rows, str(path))

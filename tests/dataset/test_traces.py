"""Trace-to-code tasks: the deterministic extraction of failure output and the trace task set."""

from __future__ import annotations

import pytest

from dataset.traces import TraceKind, extract_trace
from experiments.job.config import build

STATEMENT = """Writing a table fails:

```python
>>> tbl.write(sys.stdout, format="ascii.rst", header_rows=["name", "unit"])
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/usr/lib/python3/dist-packages/astropy/io/ascii/core.py", line 1719, in _get_writer
    writer = Writer(**writer_kwargs)
TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'
```

I expected it to work like `ascii.fixed_width`, which raises no TypeError: here.
"""


def test_a_traceback_block_is_its_frames_and_exception_line():
    trace = extract_trace(STATEMENT, 16384)
    assert trace.kind is TraceKind.TRACEBACK and not trace.truncated
    assert trace.text == (
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        '  File "/usr/lib/python3/dist-packages/astropy/io/ascii/core.py", line 1719, in _get_writer\n'
        "    writer = Writer(**writer_kwargs)\n"
        "TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'")


def test_chained_tracebacks_keep_the_chain_line():
    text = ("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'x'\n\n"
            "During handling of the above exception, another exception occurred:\n\n"
            "Traceback (most recent call last):\n  File \"a.py\", line 3, in g\nValueError: bad\n")
    assert extract_trace(text, 16384).text == (
        "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'x'\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n  File \"a.py\", line 3, in g\nValueError: bad")


def test_without_a_traceback_the_error_lines_in_order_once_each():
    text = "Calling it:\n    TypeError: unsupported operand\nagain:\nTypeError: unsupported operand\nValueError: no\n"
    trace = extract_trace(text, 16384)
    assert trace.kind is TraceKind.ERROR_LINE and trace.text == "TypeError: unsupported operand\nValueError: no"


def test_no_failure_output_is_no_trace():
    assert extract_trace("The docs say X but the code does Y.\nA Warning: is not an error.", 16384) is None


def test_the_trace_is_cut_at_a_line_boundary_within_the_byte_cap():
    frames = "".join(f'  File "m{i}.py", line {i}, in f{i}\n' for i in range(200))
    trace = extract_trace(f"Traceback (most recent call last):\n{frames}RuntimeError: deep\n", 1000)
    assert trace.truncated and len(trace.text.encode()) <= 1000
    assert all(line.startswith(("Traceback", '  File "m')) for line in trace.text.split("\n"))


def test_the_shared_trace_set(swebench_file, monkeypatch):
    monkeypatch.setenv("LOCLAB_SWEBENCH_LITE", str(swebench_file))
    manifest = build("dataset.loader", "dataset=swebench_lite_pypi_traces")
    kinds = [r.task.metadata["trace_kind"] for r in manifest.rows]
    assert (len(kinds), kinds.count("traceback"), kinds.count("error_line")) == (22, 15, 7)
    assert all(len(r.task.text.encode()) <= 16384 and r.task.languages == ("python",) for r in manifest.rows)
    assert all("Traceback (most recent call last)" in r.task.text for r in manifest.rows
               if r.task.metadata["trace_kind"] == "traceback")
    assert manifest.content_hash == build("dataset.loader", "dataset=swebench_lite_pypi_traces").content_hash


def test_bad_trace_inputs_are_refused_naming_what(tmp_path, swebench_file):
    import pytest

    from dataset.manifest import ManifestError, build_manifest, load_manifest, write_manifest
    from dataset.traces import load_swebench_traces, load_trace_tasks
    from experiments.job.paths import PROJECT_ROOT

    with pytest.raises(ManifestError, match="max_trace_bytes must be >= 1"):
        load_swebench_traces(swebench_file, "t", "1", "d", 0, None, None, ".")
    with pytest.raises(ManifestError, match="longer than max_trace_bytes"):
        load_swebench_traces(swebench_file, "t", "1", "d", 10, None, None, ".")
    demo = load_manifest(PROJECT_ROOT / "datasets" / "demo" / "manifest.jsonl")
    issues_only = tmp_path / "issues.jsonl"
    rows = [r for r in demo.rows if r.task.metadata.get("input") != "failure_trace"]
    write_manifest(build_manifest("issues", "1", "d", demo.header.gold_rule, rows, str(issues_only)), issues_only)
    with pytest.raises(ManifestError, match="no task has metadata.input = failure_trace"):
        load_trace_tasks(issues_only, "t")
    import json

    quiet = tmp_path / "quiet.jsonl"  # SWE-bench rows whose problem statements show no failure output
    with swebench_file.open() as source, quiet.open("w") as out:
        for line in list(source)[:3]:
            row = json.loads(line)
            out.write(json.dumps(row | {"problem_statement": "The docs could say more about options."}) + "\n")
    with pytest.raises(ManifestError, match="none of its 3 rows has a failure trace in its problem statement"):
        load_swebench_traces(quiet, "t", "1", "d", 1000, None, None, tmp_path / "cache")


def test_a_rust_panic_is_a_trace_with_its_message_and_backtrace():
    issue = ("It crashes on start:\n\nthread 'main' panicked at src/builder/debug_asserts.rs:106:17:\n"
             "Command app: Long option names must be unique\nstack backtrace:\n   0: rust_begin_unwind\n"
             "             at ./library/std/src/panicking.rs:1:1\n   1: clap::builder::debug_asserts::assert_app\n"
             "note: Some details are omitted\n\nAny idea?\n")
    trace = extract_trace(issue, 16384)
    assert trace.kind is TraceKind.PANIC
    assert trace.text.startswith("thread 'main' panicked at") and trace.text.endswith("note: Some details are omitted")
    assert "Any idea" not in trace.text and "crashes" not in trace.text
    no_backtrace = extract_trace("thread 'main' panicked at src/a.rs:1:1:\nboom\n\nmore prose", 16384)
    assert no_backtrace.kind is TraceKind.PANIC and no_backtrace.text == "thread 'main' panicked at src/a.rs:1:1:\nboom"


JAVA_TRACE = ("Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"30s\"\n"
              "\tat java.base/java.lang.Long.decode(Long.java:1299)\n"
              "\tat org.apache.cordova.CordovaPreferences.getInteger(CordovaPreferences.java:78)\n"
              "Caused by: java.lang.IllegalStateException: boom\n\t... 3 more\n")
V8_TRACE = ("TypeError: Cannot read properties of undefined (reading 'status')\n"
            "    at ServerResponse.sendStatus (/app/node_modules/express/lib/response.js:369:22)\n"
            "    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)\n")
GO_PANIC = ("panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n"
            "github.com/spf13/cobra.(*Command).ExecuteC(0xc000004300)\n\t/src/cobra/command.go:1044 +0x3b\n"
            "main.main()\n\t/src/app/main.go:9 +0x25\nexit status 2\n")


@pytest.mark.parametrize(("trace", "frames"), [(JAVA_TRACE, 4), (V8_TRACE, 2), (GO_PANIC, 5)],
                         ids=["java", "javascript", "go"])
def test_a_java_javascript_or_go_stack_is_a_trace_with_its_frames(trace, frames):
    """Not only the exception's line: the frames the owner terms come from (issue 48)."""
    issue = f"It fails in production with\n\n```\n{trace}```\n\nAny idea what changed since 4.17?\n"
    found = extract_trace(issue, 16384)
    assert found.kind is TraceKind.STACK
    printed = [line.rstrip() for line in trace.split("\n") if line.strip()]  # Go's blank separator is not kept
    assert found.text == "\n".join(printed[:frames + 1])
    assert "Any idea" not in found.text and "```" not in found.text

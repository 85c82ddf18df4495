"""Trace-to-code in every language: Rust panics and backtraces, JavaScript/TypeScript stack traces,
Go panics and Java stack traces give the same owner terms and frame files as Python tracebacks."""

from __future__ import annotations

import pytest

from locator.lane.terms import TraceTerms
from locator.retrieval.query import MentionKind, mentions

TERMS = TraceTerms(max_ast_terms=8, max_owner_terms=4, max_argument_terms=4)

TRACES = {
    "rust": ("thread 'main' panicked at clap_builder/src/builder/arg.rs:4310:9:\nArgument 'mode' is invalid\n"
             "stack backtrace:\n   0: rust_begin_unwind\n   1: clap_builder::builder::arg::Arg::default_value_if\n"
             "             at ./clap_builder/src/builder/arg.rs:4310:9\n   2: app::main\n",
             "clap_builder/src/builder/arg.rs", "Arg.default_value_if", "default_value_if"),
    "typescript": ("TypeError: Cannot read properties of undefined (reading 'type')\n"
                   "    at MessageRouter.routeMessage (web/src/platform/socket/MessageRouter.ts:42:17)\n"
                   "    at WebSocket.onmessage (web/src/platform/socket/Socket.ts:88:5)\n",
                   "web/src/platform/socket/MessageRouter.ts", "MessageRouter.routeMessage", "routeMessage"),
    "go": ("panic: runtime error: invalid memory address or nil pointer dereference\n\ngoroutine 1 [running]:\n"
           "github.com/spf13/cobra.(*Command).ExecuteC(0xc000004300)\n\t/src/cobra/command.go:1044 +0x3b\n"
           "main.main()\n\t/src/app/main.go:10 +0x25\n",
           "/src/cobra/command.go", "Command.ExecuteC", "ExecuteC"),
    "java": ("Exception in thread \"main\" java.lang.NullPointerException\n"
             "\tat org.demo.Parser.parseLine(Parser.java:27)\n\tat org.demo.Main.main(Main.java:5)\n",
             "Parser.java", "Parser.parseLine", "parseLine"),
    "python": ('Traceback (most recent call last):\n  File "/x/itsdangerous/timed.py", line 204, in unsign\n'
               "    raise SignatureExpired(...)\nitsdangerous.exc.SignatureExpired: Signature age 5 > 1 seconds\n",
               "/x/itsdangerous/timed.py", "exc.SignatureExpired", "unsign"),
}


@pytest.mark.parametrize("language", sorted(TRACES))
def test_a_trace_in_each_language_gives_its_frames_file_and_owner_terms(language):
    trace, path, owner, name = TRACES[language]
    terms = TERMS.extract(trace, (language,))
    assert name in terms.ast and owner in terms.owners, terms
    assert any(m.kind is MentionKind.FRAME and m.text == path for m in mentions(trace))


def test_a_declared_language_reads_only_its_own_frames():
    """A Python task's trace is read by Python's rules alone: a call line that looks like a Go frame
    (`main.run(...)`) is an AST term there, not a frame."""
    trace = "main.run(x)\n"
    assert TERMS.extract(trace, ("python",)).ast == ("run",)
    assert TERMS.extract(trace, ("go",)).ast == ("run",) and TERMS.extract(trace, ("go",)).owners == ()

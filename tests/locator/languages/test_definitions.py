"""Definitions from each registered language's tags queries (the grammar wheels' own tags.scm and
loclab's named additions): kinds, qualified names, spans, and Python's equal to what `ast` gave."""

from __future__ import annotations

import ast

import pytest

from locator.languages import REGISTERED, language_of, named
from locator.outline import definitions

SAMPLES = {
    "crates/agent/src/server/websocket.rs": (
        "#[derive(Debug)]\npub struct Server { port: u16 }\n\nimpl Server {\n    pub fn handle(&self) -> u8 {\n"
        "        1\n    }\n}\n\npub trait Route { fn route(&self); }\n\nmod tests {\n    #[test]\n    fn t() {}\n}\n",
        {("Server", "class", 1, 2), ("Server", "class", 4, 8), ("Server.handle", "function", 5, 7),
         ("Route", "class", 10, 10), ("Route.route", "function", 10, 10), ("tests", "module", 12, 15),
         ("tests.t", "function", 13, 14)}),
    "web/src/platform/socket/MessageRouter.ts": (
        "export interface Handler { handle(m: string): void }\nexport enum Kind { A }\n"
        "export class MessageRouter {\n  route(m: string) {\n    return m\n  }\n}\nexport const send = (m) => m\n",
        {("Handler", "class", 1, 1), ("Handler.handle", "function", 1, 1), ("Kind", "class", 2, 2),
         ("MessageRouter", "class", 3, 7), ("MessageRouter.route", "function", 4, 6), ("send", "function", 8, 8)}),
    "web/src/App.tsx": ("export function App() {\n  return <div/>\n}\n", {("App", "function", 1, 3)}),
    "lib/utils.js": ("class Cache {\n  get(k) { return k }\n}\nmodule.exports.merge = function (a, b) { return a }\n"
                     "res.send = function send(body) {\n  return body\n}\n",
                     {("Cache", "class", 1, 3), ("Cache.get", "function", 2, 2), ("merge", "function", 4, 4),
                      ("send", "function", 5, 7)}),  # matched as an assignment and as a named function: once
    "cmd/root.go": ("package cmd\n\ntype Command struct{}\n\nfunc (c *Command) Execute() error {\n\treturn nil\n}\n",
                    {("Command", "class", 3, 3), ("Execute", "function", 5, 7)}),
    "src/main/java/a/Parser.java": ("package a;\n\npublic class Parser {\n  Parser() {}\n  int parse(String s) {\n"
                                    "    return 1;\n  }\n  enum Mode { A }\n}\n",
                                    {("Parser", "class", 3, 9), ("Parser.Parser", "function", 4, 4),
                                     ("Parser.parse", "function", 5, 7), ("Parser.Mode", "class", 8, 8)}),
    "pkg/core.py": ("@cache\ndef f():\n    def g():\n        pass\n\nclass C:\n    def m(self):\n        pass\n",
                    {("f", "function", 1, 4), ("f.g", "function", 3, 4), ("C", "class", 6, 8), ("C.m", "function", 7, 8)}),
}


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_each_language_defines_its_functions_classes_and_their_kin(path):
    source, expected = SAMPLES[path]
    found = {(d.qualname, d.kind, d.start_line, d.end_line) for d in definitions(path, source)}
    assert found == expected


def test_every_registered_language_has_a_sample_and_its_tags_compile():
    covered = {language_of(p).name for p in SAMPLES}
    assert covered == {language.name for language in REGISTERED}
    for language in REGISTERED:
        for suffix in language.suffixes:
            assert language.query_for(f"x{suffix}").pattern_count > 0


def test_a_rust_attribute_and_a_python_decorator_belong_to_their_definition_but_the_signature_is_its_own_line():
    [struct, *_] = definitions("a.rs", "#[derive(Debug)]\n#[serde(x)]\nstruct S;\n")
    assert (struct.start_line, struct.signature_line) == (1, 3)
    [function] = definitions("a.py", "@a\n@b\ndef f():\n    pass\n")
    assert (function.start_line, function.signature_line) == (1, 3)


def _ast_outline(source: str) -> list[tuple]:
    """What loclab's Python outline was before the tags queries (ast), for the equality below."""
    kinds = {ast.FunctionDef: "function", ast.AsyncFunctionDef: "function", ast.ClassDef: "class"}
    found = []

    def visit(node, prefix, depth):
        for child in ast.iter_child_nodes(node):
            if type(child) not in kinds:
                visit(child, prefix, depth)
                continue
            name = f"{prefix}.{child.name}" if prefix else child.name
            first = min([child.lineno] + [d.lineno for d in child.decorator_list])
            found.append((name, kinds[type(child)], first, child.end_lineno, child.lineno, depth))
            visit(child, name, depth + 1)

    visit(ast.parse(source), "", 0)
    return sorted(found, key=lambda d: (d[2], d[5]))


def test_python_definitions_equal_what_ast_gave_on_real_code():
    """The Python outline (LocAgent's entity metrics stand on it) is unchanged by the move to tags
    queries: loclab's own modules and the installed standard library's, comments after a body's
    last statement not part of it."""
    import json as json_module
    import textwrap

    from experiments.job.paths import PROJECT_ROOT

    sources = [p.read_text(encoding="utf-8") for p in sorted((PROJECT_ROOT / "locator").rglob("*.py"))]
    sources.append(open(json_module.__file__.replace("__init__.py", "decoder.py"), encoding="utf-8").read())
    sources.append(textwrap.dedent("""
        def f():
            x = 1
            # a comment after the last statement
        # and one at the margin
        class C:
            @property
            def p(self):
                return 1
    """))
    for source in sources:
        assert [(d.qualname, d.kind, d.start_line, d.end_line, d.signature_line, d.depth)
                for d in definitions("m.py", source)] == _ast_outline(source)


def test_an_unknown_language_is_named_with_the_registered_ones():
    from locator.languages import UnknownLanguageError

    with pytest.raises(UnknownLanguageError, match="cobol.*registered are .*'rust'"):
        named("cobol")

"""A definitions index over a subject, parsed with tree-sitter (per-language grammar wheels).

Python is required; a language is one entry of `GRAMMARS` (file suffix -> grammar and the node
types that define a named scope), so the design is open to more. The index maps every definition
name to its definitions (path, qualified name, kind, line span, signature line) and is cached per
process by the content of the files it was built from.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import tree_sitter_python
from tree_sitter import Language, Node, Parser

from locator.hashing import blake3_hex


@dataclass(frozen=True)
class Grammar:
    language: str
    parser_language: Language
    kinds: dict[str, str]  # node type -> definition kind


GRAMMARS: dict[str, Grammar] = {
    ".py": Grammar("python", Language(tree_sitter_python.language()),
                   {"function_definition": "function", "class_definition": "class"}),
}


def grammar_of(path: str) -> Grammar | None:
    return GRAMMARS.get("." + path.rsplit(".", 1)[-1])


@dataclass(frozen=True)
class IndexedDefinition:
    path: str
    name: str
    qualname: str  # `Class.method`, `function`, `Class`
    kind: str
    start_line: int
    end_line: int
    signature: str  # the definition's first line, as written

    @property
    def language(self) -> str:
        return GRAMMARS["." + self.path.rsplit(".", 1)[-1]].language


def parse_definitions(path: str, source: bytes, grammar: Grammar) -> list[IndexedDefinition]:
    """Every definition of one file, outer before inner."""
    tree = Parser(grammar.parser_language).parse(source)
    lines = source.decode("utf-8", errors="replace").splitlines()
    found: list[IndexedDefinition] = []

    def visit(node: Node, scope: tuple[str, ...]) -> None:
        for child in node.children:
            kind = grammar.kinds.get(child.type)
            if kind is None:
                visit(child, scope)
                continue
            name_node = child.child_by_field_name("name")
            if name_node is None:
                continue
            name = name_node.text.decode("utf-8", errors="replace")
            start, end = child.start_point[0] + 1, child.end_point[0] + 1
            found.append(IndexedDefinition(path, name, ".".join((*scope, name)), kind, start, end,
                                           lines[start - 1].strip() if start <= len(lines) else ""))
            visit(child, (*scope, name))

    visit(tree.root_node, ())
    return found


class DefinitionIndex:
    def __init__(self, definitions: Iterable[IndexedDefinition]):
        self.by_name: dict[str, list[IndexedDefinition]] = {}
        for d in definitions:
            self.by_name.setdefault(d.name, []).append(d)
        for defs in self.by_name.values():
            defs.sort(key=lambda d: (d.path, d.start_line))

    def named(self, name: str) -> list[IndexedDefinition]:
        return self.by_name.get(name, [])


_CACHE: OrderedDict[str, DefinitionIndex] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8


def build_index(files: dict[str, bytes]) -> DefinitionIndex:
    """The index of every file with a known grammar; the same content is parsed once per process."""
    indexed = {p: b for p, b in files.items() if "." + p.rsplit(".", 1)[-1] in GRAMMARS}
    digest = blake3_hex("\n".join(f"{p}\0{blake3_hex(b)}" for p, b in sorted(indexed.items())))
    with _CACHE_LOCK:
        if digest in _CACHE:
            _CACHE.move_to_end(digest)
            return _CACHE[digest]
    index = DefinitionIndex(d for p, b in sorted(indexed.items())
                            for d in parse_definitions(p, b, GRAMMARS["." + p.rsplit(".", 1)[-1]]))
    with _CACHE_LOCK:
        _CACHE[digest] = index
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return index

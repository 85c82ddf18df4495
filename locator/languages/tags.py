"""Definitions of a file from its language's tags queries, run by tree-sitter in C.

A definition is a node a `@definition.*` pattern captures (kinds: `language.TAG_KINDS`), named by its
`@name` capture and qualified by the definitions around it (`Class.method`, Rust `Type.method` inside
`impl Type`). Reference patterns (`@reference.call`, …) are disabled: an outline needs only what is
defined, and a query's matches are the only Python objects made per file.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Parser, QueryCursor

from locator.languages.language import TAG_KINDS, Language, load_grammar


@dataclass(frozen=True)
class Definition:
    qualname: str  # `Class.method`, `function`, `Class`
    kind: str  # a `DefinitionKind` value
    start_line: int  # its first line, a decorator or attribute included
    end_line: int
    signature_line: int  # the line its own node starts on (`def`, `fn`, `class`)
    depth: int  # definitions around it

    def contains(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


def _first_line(node: Node, language: Language) -> int:
    """The row a definition starts on, its wrapper (decorators) or leading attributes included."""
    start = node
    while start.parent is not None and start.parent.type in language.wrappers:
        start = start.parent
    sibling = start.prev_named_sibling
    while sibling is not None and sibling.type in language.leading:
        start, sibling = sibling, sibling.prev_named_sibling
    return start.start_point[0]


def parse(language: Language, path: str, source: bytes) -> tuple[Definition, ...]:
    """Every definition of one file, outermost first at an equal start."""
    query = language.query_for(path)
    tree = Parser(load_grammar(language.grammar_for(path))).parse(source)
    found: dict[tuple[int, int], tuple[Node, str, str]] = {}  # node's byte range -> (node, name, kind)
    for _, captures in QueryCursor(query).matches(tree.root_node):
        kind = next((TAG_KINDS[c] for c in captures if c in TAG_KINDS), None)
        if kind is None or "name" not in captures:
            continue
        node = next(nodes[0] for c, nodes in captures.items() if c in TAG_KINDS)
        key = (node.start_byte, node.end_byte)
        if key not in found:  # Rust: a method is also a function; the first pattern names it
            found[key] = (node, captures["name"][0].text.decode("utf-8", errors="replace"), kind.value)
    ordered = sorted(found.items(), key=lambda item: (item[0][0], -item[0][1]))
    stack: list[tuple[int, str, Node, str]] = []  # (end byte, qualname, node, name) of the definitions around
    definitions: list[Definition] = []
    for (start_byte, end_byte), (node, name, kind) in ordered:
        while stack and stack[-1][0] < end_byte:
            stack.pop()
        if stack and stack[-1][3] == name and node.parent is not None and node.parent.id == stack[-1][2].id:
            continue  # one definition matched twice: `x.f = function f() {}`, `const f = function f() {}`
        qualname = f"{stack[-1][1]}.{name}" if stack else name
        definitions.append(Definition(qualname, kind, _first_line(node, language) + 1, _last_row(node) + 1,
                                      node.start_point[0] + 1, len(stack)))
        stack.append((end_byte, qualname, node, name))
    return tuple(sorted(definitions, key=lambda d: (d.start_line, d.depth)))


def _last_row(node: Node) -> int:
    """The row of its last token: comments after its last statement (extras the grammar may attach to a
    block) are not part of it, as Python's `ast` ends a function at its last statement."""
    while node.child_count:
        kept = [child for child in node.children if not child.is_extra]
        if not kept:
            break
        node = kept[-1]
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row

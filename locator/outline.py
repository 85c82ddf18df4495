"""Python definitions (functions, methods, classes) with their line spans, via `ast`.

Entity names follow LocAgent/SweRank: `path:Class.method`, `path:function`, `path:Class`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Definition:
    qualname: str
    kind: str
    start_line: int
    end_line: int
    signature_line: int
    depth: int

    def contains(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line


_NODE_KINDS = {ast.FunctionDef: "function", ast.AsyncFunctionDef: "function", ast.ClassDef: "class"}


@lru_cache(maxsize=512)
def _definitions_cached(source: str) -> tuple[Definition, ...]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    found: list[Definition] = []

    def visit(node: ast.AST, prefix: str, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            kind = _NODE_KINDS.get(type(child))
            if kind is None:
                visit(child, prefix, depth)
                continue
            name = f"{prefix}.{child.name}" if prefix else child.name
            first = min([child.lineno] + [d.lineno for d in child.decorator_list])
            found.append(Definition(name, kind, first, child.end_lineno or child.lineno, child.lineno, depth))
            visit(child, name, depth + 1)

    visit(tree, "", 0)
    return tuple(sorted(found, key=lambda d: (d.start_line, d.depth)))


def definitions(source: str) -> list[Definition]:
    """All definitions, outermost first at equal start; empty for non-Python or unparsable text."""
    return list(_definitions_cached(source))


def innermost(defs: list[Definition], line: int) -> Definition | None:
    enclosing = [d for d in defs if d.contains(line)]
    return max(enclosing, key=lambda d: (d.depth, d.start_line)) if enclosing else None


def outermost(defs: list[Definition], line: int) -> Definition | None:
    enclosing = [d for d in defs if d.contains(line)]
    return min(enclosing, key=lambda d: (d.depth, d.start_line)) if enclosing else None

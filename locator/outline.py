"""Python definitions (functions, methods, classes) with their line spans, via `ast`.

Entity names follow LocAgent/SweRank: `path:Class.method`, `path:function`, `path:Class`.
Parsing is most of what rendering and scoring cost, and the same files are parsed by every job,
so `keep_on_disk` keeps each outline between processes, keyed by the text's content.
"""

from __future__ import annotations

import ast
import json
import sys
from dataclasses import astuple, dataclass
from functools import cache, lru_cache
from pathlib import Path

from locator.files import write_atomically
from locator.hashing import blake3_hex


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


_disk: Path | None = None  # where `keep_on_disk` keeps outlines


def keep_on_disk(directory: Path | None) -> None:
    """Keep every outline parsed in this process under `directory` (None: memory only)."""
    global _disk
    _disk = directory
    _definitions_cached.cache_clear()


@cache
def _rules() -> str:
    """What an outline was made by: Python's version (its grammar) and this module's source."""
    return f"py{sys.version_info.major}.{sys.version_info.minor}-{blake3_hex(Path(__file__).read_bytes())[:12]}"


@lru_cache(maxsize=512)
def _definitions_cached(source: str) -> tuple[Definition, ...]:
    if _disk is None:
        return _parse(source)
    key = blake3_hex(source.encode("utf-8", "surrogatepass"))
    path = _disk / _rules() / key[:2] / f"{key}.json"
    try:
        return tuple(Definition(*row) for row in json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):  # none yet, or unreadable: parse it (again)
        found = _parse(source)
        write_atomically(path, json.dumps([astuple(d) for d in found]))
        return found


def _parse(source: str) -> tuple[Definition, ...]:
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


def function_level(defs: list[Definition], line: int) -> Definition | None:
    """LocAgent's function-level entity of a line: the outermost function enclosing it (a method,
    or a top-level function: what is nested inside a function belongs to it, as LocAgent's gold
    `Mod.eval` holds its inner `doit`); a line of a class body outside any method, its innermost
    class; a module-level line, none."""
    enclosing = sorted((d for d in defs if d.contains(line)), key=lambda d: (d.depth, d.start_line))
    return next((d for d in enclosing if d.kind == "function"), enclosing[-1] if enclosing else None)


def locagent_entity(qualname: str) -> str:
    """LocAgent names a constructor by its class: `Cls.__init__` is `Cls` (its evaluation strips it)."""
    return qualname.removesuffix(".__init__")

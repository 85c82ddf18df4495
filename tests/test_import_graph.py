"""The import graph of loclab's packages has no circle (function-level imports included): a module
can be read, tested and replaced without the ones that import it."""

from __future__ import annotations

import ast

from experiments.job.paths import PROJECT_ROOT

PACKAGES = ("locator", "metrics", "experiments", "render")


def _module(path) -> str:
    parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {_module(p): p for package in PACKAGES for p in (PROJECT_ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):  # a package's own __init__
                    graph[name].add(target)
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_has_no_circle():
    graph = import_graph()
    assert "experiments.tracking.store" in graph["experiments.job.runner"] and "experiments.tracking.sweep_summary" in graph["experiments.tracking.store"]
    found = cycle(graph)
    assert found is None, " -> ".join(found)


def test_a_circle_is_found():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None

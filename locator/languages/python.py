"""Python: `.py`, tree-sitter-python's tags (functions, methods, classes; decorators belong to what
they decorate), pytest's test paths, and imports (absolute, relative, dotted names, written paths)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import tree_sitter_python

from locator.languages.language import Grammar, Language
from locator.languages.references import FileIndex

_TEST_DIRS = {"tests", "test"}


def is_test(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    return (any(part in _TEST_DIRS for part in pure.parts[:-1]) or name.startswith("test_")
            or name.endswith("_test.py") or name == "conftest.py")


class _Modules:
    """The subject's Python files by module name: the full dotted name, and every dotted suffix of at
    least two parts that names exactly one file (so `pkg.models` resolves in a `src/` layout)."""

    def __init__(self, index: FileIndex):
        self.full: dict[str, str] = {}
        suffixes: dict[str, set[str]] = {}
        for path in sorted(index.infos):
            if not path.endswith(".py"):
                continue
            parts = path[: -len(".py")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts:
                continue
            self.full.setdefault(".".join(parts), path)
            for i in range(1, len(parts) - 1):
                suffixes.setdefault(".".join(parts[i:]), set()).add(path)
        self.suffix = {name: next(iter(paths)) for name, paths in suffixes.items() if len(paths) == 1}

    def module(self, name: str) -> str | None:
        return self.full.get(name) or self.suffix.get(name)

    def longest_module(self, dotted: str) -> str | None:
        """The file of the longest prefix of `dotted` that names a module (`pkg.mod.Class.method` -> pkg/mod.py)."""
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            found = self.module(".".join(parts[:n]))
            if found is not None:
                return found
        return None


_IMPORT = re.compile(r"^\s*import\s+([^#]+)")
_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([^#)]*)")
_NAME = re.compile(r"[\w.]+")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PATH = re.compile(r"(?<![\w/.-])[\w.-]+(?:/[\w.-]+)+\.py\b")


def _imported(clause: str) -> list[str]:
    """The names an import clause binds from: `a as x, b.c` -> [a, b.c]."""
    return [m.group(0) for part in clause.split(",") if (m := _NAME.match(part.strip()))]


def _package_of(path: str, dots: int) -> str:
    """The package a relative import with `dots` leading dots starts from, in `path`."""
    parts = list(PurePosixPath(path).parent.parts)
    return ".".join(parts[: len(parts) - (dots - 1)] if dots > 1 else parts)


def references(path: str, line: str, index: FileIndex) -> list[tuple[str, str]]:
    modules: _Modules = index.memo("python.modules", lambda: _Modules(index))
    found: list[tuple[str, str]] = []
    if m := _FROM.match(line):
        dots, module, names = len(m.group(1)), m.group(2), _imported(m.group(3))
        base = module if not dots else ".".join(p for p in (_package_of(path, dots), module) if p)
        written = m.group(1) + module
        for name in names:
            target = modules.module(f"{base}.{name}" if base else name)
            if target is not None:
                found.append((target, f"{written}.{name}" if module else f"{written}{name}"))
        if base and (target := modules.module(base)) is not None:
            found.append((target, written))
    elif m := _IMPORT.match(line):
        for name in _imported(m.group(1)):
            if (target := modules.longest_module(name)) is not None:
                found.append((target, name))
    else:
        for written in _PATH.findall(line):
            if (target := index.path(written)) is not None:
                found.append((target, written))
        for dotted in _DOTTED.findall(line):
            if (target := modules.longest_module(dotted)) is not None and "." in dotted:
                found.append((target, dotted))
    return found


LANGUAGE = Language(
    name="python",
    fence="python",
    grammars={".py": Grammar(tree_sitter_python, tree_sitter_python.language)},
    tags_from=(tree_sitter_python,),
    wrappers=frozenset({"decorated_definition"}),
    is_test=is_test,
    references=references,
    frames=(re.compile(r'File "(?P<path>[^"\n]+)", line \d+(?:, in (?P<name>[A-Za-z_]\w*))?'),),
    module_files=("{}.py", "{}/__init__.py"),
    entity_rule="LocAgent's: a method or top-level function (what is nested in a function is its own); "
                "a class body line outside methods, its innermost class; `Cls.__init__` named `Cls`",
)

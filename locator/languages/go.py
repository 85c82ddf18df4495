"""Go: `.go`, tree-sitter-go's tags (functions, methods, type specs), `_test.go` files and `testdata/`,
and imports of the module's own packages (an import path's tail names a folder of the subject)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import tree_sitter_go

from locator.languages.language import Grammar, Language
from locator.languages.references import FileIndex


def is_test(path: str) -> bool:
    pure = PurePosixPath(path)
    return pure.name.endswith("_test.go") or "testdata" in pure.parts[:-1]


# `import "a/b"`, `import x "a/b"`, and a line of an import block: `"a/b"`, `x "a/b"`
_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:[A-Za-z_.]\w*\s+)?"([\w.~/-]+/[\w.~-]+)"\s*(?://.*)?$')


def references(path: str, line: str, index: FileIndex) -> list[tuple[str, str]]:
    """A package of the subject is a folder; the reference is to its source files (tests apart)."""
    m = _IMPORT.match(line)
    if not m:
        return []
    parts = m.group(1).split("/")
    for n in range(1, len(parts)):  # the longest tail that names one folder of the subject
        folder = index.folder("/".join(parts[n - 1 :]))
        if folder is not None:
            files = [p for p in index.in_folder(folder) if p.endswith(".go") and not is_test(p)]
            return [(p, m.group(1)) for p in files if p != path]
    return []


LANGUAGE = Language(
    name="go",
    fence="go",
    grammars={".go": Grammar(tree_sitter_go, tree_sitter_go.language)},
    tags_from=(tree_sitter_go,),
    is_test=is_test,
    references=references,
    frames=(
        # a goroutine's frames: `pkg/path.(*Type).Method(...)` then `\t/abs/path/file.go:123 +0x1d`
        # (a package path with a `/`, or `main`: a Python or JavaScript call line is not a Go frame)
        re.compile(r"^(?:(?:[\w.-]+/)+[\w-]+|main)\.(?:\(\*?(?P<owner>[A-Za-z_]\w*)\)\.)?(?P<name>[A-Za-z_]\w*)\(.*\)$"),
        re.compile(r"^\s*(?P<path>[\w./\\-]+\.go):\d+(?: \+0x[0-9a-f]+)?$"),
    ),
    module_files=("{}.go",),
    entity_rule="function level: a function or method (named by itself, not its receiver); "
                "class level: a type declaration (struct, interface, alias)",
)

"""Java: `.java`, tree-sitter-java's tags (classes, interfaces, methods) plus enums, records and
constructors, Maven/Gradle test paths, and imports resolved by package path."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import tree_sitter_java

from locator.languages.language import Grammar, Language
from locator.languages.references import FileIndex

# Enums and records are classes an issue names; a constructor is where `new Type(...)` behaviour lives.
EXTRA_TAGS = """
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(constructor_declaration name: (identifier) @name) @definition.method
"""


def is_test(path: str) -> bool:
    """A `test/` or `tests/` folder (Maven's and Gradle's `src/test/java`), `*Test.java`, `*Tests.java`, `*IT.java`."""
    pure = PurePosixPath(path)
    return (any(p in ("test", "tests") for p in pure.parts[:-1])
            or pure.name.endswith(("Test.java", "Tests.java", "IT.java")))


_IMPORT = re.compile(r"^\s*import\s+(static\s+)?([\w.]+)\s*;")


def references(path: str, line: str, index: FileIndex) -> list[tuple[str, str]]:
    m = _IMPORT.match(line)
    if not m:
        return []
    parts = m.group(2).split(".")
    # a static import names a member of the class: its file is one segment shorter
    for n in ((len(parts) - 1, len(parts)) if m.group(1) else (len(parts),)):
        target = index.path("/".join(parts[:n]) + ".java")
        if target is not None and target != path:
            return [(target, m.group(2))]
    return []


LANGUAGE = Language(
    name="java",
    fence="java",
    grammars={".java": Grammar(tree_sitter_java, tree_sitter_java.language)},
    tags_from=(tree_sitter_java,),
    extra_tags=EXTRA_TAGS,
    is_test=is_test,
    references=references,
    frames=(re.compile(r"at (?:[\w$]+\.)*(?P<owner>[A-Z][\w$]*)\.(?P<name>[\w$<>]+)\((?P<path>[\w$]+\.java):\d+\)"),),
    module_files=("{}.java",),
    entity_rule="function level: a method or constructor (`Class.method`); class level: a class, "
                "interface, enum or record",
)

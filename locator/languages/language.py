"""What loclab knows about one programming language: one `Language` entry per language module.

A language is its file suffixes, its tree-sitter grammar wheel (the grammar and the wheel's own
`queries/tags.scm`, the code-navigation convention: `@definition.function`, `@definition.class`, …),
which paths are its tests, how its files refer to each other, and how code in it is fenced and
commented. Everything language-specific in loclab reads it from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import metadata
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import TYPE_CHECKING

from tree_sitter import Language as GrammarLanguage
from tree_sitter import Query

if TYPE_CHECKING:
    from locator.languages.references import FileIndex


class DefinitionKind(StrEnum):
    """What a definition is, across languages: LocAgent's function level (functions, methods, Rust
    macros) and class level (classes, structs, enums, interfaces, traits, `impl` blocks, type aliases),
    and modules (Rust `mod`, TypeScript namespaces)."""

    FUNCTION = "function"
    CLASS = "class"
    MODULE = "module"


# tags.scm capture -> kind. Captures not listed (`@definition.constant`: Python module-level
# assignments, exported JavaScript constants) are not definitions here: loclab's definitions are
# scopes with bodies, the units LocAgent's entity metrics and the outline readers work in.
TAG_KINDS: dict[str, DefinitionKind] = {
    "definition.function": DefinitionKind.FUNCTION,
    "definition.method": DefinitionKind.FUNCTION,
    "definition.macro": DefinitionKind.FUNCTION,
    "definition.class": DefinitionKind.CLASS,
    "definition.interface": DefinitionKind.CLASS,
    "definition.type": DefinitionKind.CLASS,
    "definition.enum": DefinitionKind.CLASS,
    "definition.impl": DefinitionKind.CLASS,
    "definition.module": DefinitionKind.MODULE,
}


@dataclass(frozen=True)
class Grammar:
    """A tree-sitter grammar from its wheel (imported by the language's module, so the wheel is part of
    every result's address): `pointer()` is the language, `wheel` the module that ships it."""

    wheel: ModuleType  # `tree_sitter_rust`
    pointer: Callable[[], object]  # `tree_sitter_rust.language`


@cache
def load_grammar(grammar: Grammar) -> GrammarLanguage:
    return GrammarLanguage(grammar.pointer())


@cache
def wheel_tags(wheel: ModuleType) -> str:
    """The `queries/tags.scm` a grammar wheel ships (read from the installed wheel, never a subject)."""
    return (Path(wheel.__file__).parent / "queries" / "tags.scm").read_text(encoding="utf-8")


def distribution(wheel: ModuleType) -> str:
    return wheel.__name__.replace("_", "-")


@dataclass(frozen=True, eq=False)  # one object per language: compared and hashed by identity
class Language:
    name: str  # as a task or data set declares it: `rust`, `typescript`
    fence: str  # the Markdown fence name of its code
    grammars: dict[str, Grammar]  # file suffix -> grammar (TypeScript's `.tsx` is its own grammar)
    tags_from: tuple[ModuleType, ...]  # grammar wheels whose tags.scm define its definitions, in order
    # loclab's additions to the wheels' tags, each said why in the language's module
    extra_tags: str = ""
    # node types around a definition that belong to it (Python's `decorated_definition`)
    wrappers: frozenset[str] = frozenset()
    # node types just before a definition that belong to it (Rust's `#[...]` attribute items)
    leading: frozenset[str] = frozenset()
    # which subject paths are its tests (never gold, counted apart)
    is_test: Callable[[str], bool] = field(default=lambda path: False)
    # (target path, reference as written) for each subject file `line` of `path` refers to
    references: Callable[[str, str, "FileIndex"], list[tuple[str, str]]] = field(default=lambda path, line, index: [])
    # a stack frame of its failure traces, one line: groups `path` (the file), `owner` (the type or
    # module the function is a member of, `::`/`.`-qualified as written) and `name` (the function)
    frames: tuple[re.Pattern[str], ...] = ()
    # the files a module's path stem names (`a/b` from `a.b` or `a::b`): `{}.py`, `{}/__init__.py`
    module_files: tuple[str, ...] = ()
    entity_rule: str = ""  # how its definitions map to LocAgent's function and class levels, for the metrics

    @property
    def suffixes(self) -> tuple[str, ...]:
        return tuple(self.grammars)

    def grammar_for(self, path: str) -> Grammar:
        return self.grammars[suffix_of(path)]

    def query_for(self, path: str) -> Query:
        return _query(self, self.grammar_for(path))

    def versions(self) -> dict[str, str]:
        """The installed grammar wheels it parses with: part of what an outline was made by."""
        wheels = {distribution(g.wheel) for g in self.grammars.values()} | {distribution(w) for w in self.tags_from}
        return {name: metadata.version(name) for name in sorted(wheels)}


def suffix_of(path: str) -> str:
    return PurePosixPath(path).suffix


_QUERIES: dict[tuple[str, Grammar], Query] = {}


def _query(language: Language, grammar: Grammar) -> Query:
    key = (language.name, grammar)
    query = _QUERIES.get(key)
    if query is None:
        source = "\n".join([*(wheel_tags(m) for m in language.tags_from), language.extra_tags])
        query = Query(load_grammar(grammar), source)
        raw = source.encode("utf-8")
        # Only what is defined is needed: patterns that define nothing (`@reference.call` matches every
        # call) are disabled, and so are doc comments, so a file's matches are its definitions.
        for pattern in range(query.pattern_count):
            if b"@definition." not in raw[query.start_byte_for_pattern(pattern):query.end_byte_for_pattern(pattern)]:
                query.disable_pattern(pattern)
        if any(query.capture_name(i) == "doc" for i in range(query.capture_count)):
            query.disable_capture("doc")
        _QUERIES[key] = query
    return query


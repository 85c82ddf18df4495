"""Rust: `.rs`, tree-sitter-rust's tags plus `impl` blocks as scopes (so `impl Arg { fn default_value_if }`
gives `Arg.default_value_if`), crate test paths, and `mod` / `use crate::` / `super::` references."""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePosixPath

import tree_sitter_rust

from locator.languages.language import Grammar, Language
from locator.languages.references import FileIndex, first_existing

# The wheel's tags name an `impl` only as a reference; loclab's outlines need it as the scope its
# methods are qualified by (LocAgent's class level), and trait method signatures as definitions.
EXTRA_TAGS = """
(impl_item
  type: [(type_identifier) @name
         (generic_type type: (type_identifier) @name)
         (scoped_type_identifier name: (type_identifier) @name)]) @definition.impl

(function_signature_item name: (identifier) @name) @definition.method
"""

_TEST_DIRS = {"tests", "benches"}


def is_test(path: str) -> bool:
    """A crate's `tests/` and `benches/` (integration tests and benchmarks) and `tests.rs` modules."""
    pure = PurePosixPath(path)
    return any(part in _TEST_DIRS for part in pure.parts[:-1]) or pure.name == "tests.rs"


_MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*;")
_PATHS = re.compile(r"(?<![\w:])((?:crate|super|self|[A-Za-z_]\w*)(?:::[A-Za-z_]\w*)+)")


def _module_dir(path: str) -> str:
    """The folder a file's child modules live in: `src/lib.rs` -> `src`, `src/a.rs` -> `src/a`."""
    pure = PurePosixPath(path)
    if pure.name in ("lib.rs", "main.rs", "mod.rs"):
        return str(pure.parent) if str(pure.parent) != "." else ""
    return str(pure.with_suffix(""))


def _crate_root(path: str) -> str | None:
    """The crate's `src` folder holding `path`."""
    parts = PurePosixPath(path).parts[:-1]
    if "src" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("src")
    return "/".join(parts[: at + 1])


def _module_file(index: FileIndex, base: str, segments: list[str]) -> str | None:
    """The file of the longest prefix of `segments` that is a module under `base`."""
    for n in range(len(segments), 0, -1):
        stem = posixpath.join(base, *segments[:n]) if base else posixpath.join(*segments[:n])
        found = first_existing(index, [f"{stem}.rs", f"{stem}/mod.rs"])
        if found:
            return found
    return None


def _crates(index: FileIndex) -> dict[str, str]:
    """Workspace crates by the name `use` writes (`clap_builder`): folder name, `-` as `_`."""
    roots: dict[str, str] = {}
    for path in index.infos:
        if path.endswith("/src/lib.rs"):
            folder = path[: -len("/src/lib.rs")]
            roots.setdefault(PurePosixPath(folder).name.replace("-", "_"), folder + "/src")
    return roots


def references(path: str, line: str, index: FileIndex) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if m := _MOD.match(line):
        target = first_existing(index, [posixpath.join(_module_dir(path), f"{m.group(1)}.rs"),
                                        posixpath.join(_module_dir(path), m.group(1), "mod.rs")])
        return [(target, f"mod {m.group(1)}")] if target else []
    for written in _PATHS.findall(line):
        head, *rest = written.split("::")
        if head == "crate":
            base = _crate_root(path)
        elif head == "self":
            base = _module_dir(path)
        elif head == "super":
            base = posixpath.dirname(_module_dir(path))
            while rest and rest[0] == "super":
                base, rest = posixpath.dirname(base), rest[1:]
        else:
            base = index.memo("rust.crates", lambda: _crates(index)).get(head)
        if base is None or not rest:
            continue
        target = _module_file(index, base, rest)
        if target is not None and (target, written) not in found:
            found.append((target, written))
    return found


LANGUAGE = Language(
    name="rust",
    fence="rust",
    grammars={".rs": Grammar(tree_sitter_rust, tree_sitter_rust.language)},
    tags_from=(tree_sitter_rust,),
    extra_tags=EXTRA_TAGS,
    leading=frozenset({"attribute_item"}),
    is_test=is_test,
    references=references,
    frames=(
        # a panic (`panicked at src/x.rs:3:5:`, older `panicked at 'msg', src/x.rs:3:5`) and a backtrace's
        # symbol line (`3: clap_builder::builder::arg::Arg::default_value_if`) and location line (`at ./src/x.rs:12:5`)
        re.compile(r"panicked at (?:'[^']*', )?(?P<path>[\w./\\-]+\.rs):\d+:\d+"),
        re.compile(r"^\s*\d+: (?:<?(?P<owner>[A-Za-z_][\w:]*?)(?: as [\w:]+>)?::)?(?P<name>[A-Za-z_]\w*)(?:::h[0-9a-f]{16})?$"),
        re.compile(r"^\s*at (?P<path>[\w./\\-]+\.rs):\d+(?::\d+)?$"),
    ),
    module_files=("{}.rs", "{}/mod.rs"),
    entity_rule="function level: a `fn` (in an `impl` or trait, `Type.method`; a macro_rules! macro); "
                "class level: a struct, enum, union, trait, type alias or `impl` block (named by its type)",
)

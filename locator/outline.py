"""A file's definitions (functions, methods, classes and their kin in every registered language)
with their line spans, from its language's tags queries (`locator.languages.tags`).

Entity names follow LocAgent/SweRank: `path:Class.method`, `path:function`, `path:Class`.
Parsing is most of what rendering and scoring cost, and the same files are parsed by every job,
so `keep_on_disk` keeps each outline between processes, keyed by its language and the text's content.
"""

from __future__ import annotations

import json
from dataclasses import astuple
from functools import cache, lru_cache
from pathlib import Path

from locator import languages
from locator.files import write_atomically
from locator.hashing import blake3_hex
from locator.languages import language_of
from locator.languages.tags import Definition, parse

_disk: Path | None = None  # where `keep_on_disk` keeps outlines


def keep_on_disk(directory: Path | None) -> None:
    """Keep every outline parsed in this process under `directory` (None: memory only)."""
    global _disk
    _disk = directory
    _definitions_cached.cache_clear()


@cache
def _rules() -> str:
    """What an outline was made by: the grammar wheels' versions, the languages' modules and this one."""
    package = Path(languages.__file__).parent
    sources = [Path(__file__).read_bytes(), *(p.read_bytes() for p in sorted(package.glob("*.py")))]
    versions = {name: v for language in languages.REGISTERED for name, v in language.versions().items()}
    return blake3_hex(json.dumps(versions, sort_keys=True).encode() + b"".join(sources))[:16]


@lru_cache(maxsize=512)
def _definitions_cached(name: str, suffix: str, source: str) -> tuple[Definition, ...]:
    language = languages.named(name)
    path = f"file{suffix}"  # the grammar is chosen by suffix (TypeScript's `.tsx`); the rest of a path is not read
    if _disk is None:
        return parse(language, path, source.encode("utf-8", "surrogatepass"))
    key = blake3_hex(f"{name}{suffix}\0".encode() + source.encode("utf-8", "surrogatepass"))
    saved = _disk / _rules() / key[:2] / f"{key}.json"
    try:
        return tuple(Definition(*row) for row in json.loads(saved.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):  # none yet, or unreadable: parse it (again)
        found = parse(language, path, source.encode("utf-8", "surrogatepass"))
        write_atomically(saved, json.dumps([astuple(d) for d in found]))
        return found


def definitions(path: str, source: str) -> list[Definition]:
    """All definitions of the file at `path`, outermost first at equal start; empty for a file of no
    registered language."""
    language = language_of(path)
    if language is None:
        return []
    return list(_definitions_cached(language.name, "." + path.rsplit(".", 1)[-1], source))


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

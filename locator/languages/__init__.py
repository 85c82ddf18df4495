"""The languages loclab reads: one module per language, each a `Language` entry and a grammar wheel.

Adding a language: a module here defining `LANGUAGE` (see `language.Language`), its line in
`REGISTERED`, and its grammar wheel pinned in pyproject.toml. Nothing else names a language.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from locator.languages import go, java, javascript, python, rust, typescript
from locator.languages.language import DefinitionKind, Language, suffix_of

REGISTERED: tuple[Language, ...] = (
    python.LANGUAGE,
    rust.LANGUAGE,
    typescript.LANGUAGE,
    javascript.LANGUAGE,
    go.LANGUAGE,
    java.LANGUAGE,
)

_BY_NAME = {language.name: language for language in REGISTERED}
_BY_SUFFIX = {suffix: language for language in REGISTERED for suffix in language.suffixes}


class UnknownLanguageError(ValueError):
    """A declared language loclab has no entry for."""


def named(name: str) -> Language:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownLanguageError(f"unknown language {name!r}: registered are {sorted(_BY_NAME)}") from None


def language_of(path: str) -> Language | None:
    """The registered language a path is written in, by its suffix; None for any other file."""
    return _BY_SUFFIX.get(suffix_of(path))


def module_name(path: str) -> str:
    """The module a file is, by its language's module files: `pkg/mod.py` -> `mod`, a package's index
    file (`pkg/__init__.py`, `server/mod.rs`, `socket/index.ts`) -> its folder's name."""
    pure = PurePosixPath(path)
    language = language_of(path)
    index_files = {t.rsplit("/", 1)[-1] for t in language.module_files if "/" in t} if language else set()
    if pure.name in index_files and len(pure.parts) > 1:
        return pure.parent.name
    return pure.name.removesuffix(pure.suffix)


def is_test(path: str) -> bool:
    """A test file of its language (never a test of another language's rule)."""
    language = language_of(path)
    return language is not None and language.is_test(path)


__all__ = ["REGISTERED", "DefinitionKind", "Language", "UnknownLanguageError", "is_test", "language_of", "module_name",
           "named"]

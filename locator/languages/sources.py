"""Which files of a subject are candidates: files of the task's languages (declared by the task or
its data set; absent a declaration, every registered language present), generated and vendored
files apart.

Generated or vendored, by default never candidates (a word-overlap ranker takes axios's
`dist/axios.cjs` for source): files under `node_modules/`, `bower_components/`, `vendor/`,
`third_party/` or a `dist/` build folder; minified and bundled files (`*.min.js`, `*.bundle.js`);
files that say so in their first lines (`@generated`, Go's `Code generated … DO NOT EDIT.`); files
`.gitattributes` marks `linguist-generated` or `linguist-vendored`. Each is counted by reason and
named in the result (`SourceSelection`).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath

from locator import languages
from locator.languages import language_of


class Excluded(StrEnum):
    VENDORED = "vendored"  # a dependency's copy: node_modules/, vendor/, …
    BUILD_OUTPUT = "build_output"  # dist/, minified or bundled files
    MARKED_GENERATED = "marked_generated"  # says so in its first lines
    LINGUIST_GENERATED = "linguist_generated"  # .gitattributes
    LINGUIST_VENDORED = "linguist_vendored"  # .gitattributes


VENDOR_DIRS = frozenset({"node_modules", "bower_components", "vendor", "third_party"})
BUILD_DIRS = frozenset({"dist"})
_BUILT_NAME = re.compile(r"[.-]min\.[cm]?js$|\.bundle\.[cm]?js$")
_MARKER = re.compile(r"@generated\b|Code generated .* DO NOT EDIT")
MARKER_LINES = 5  # a generated file says so at its top


def marked_generated(text: str) -> bool:
    """The file says it is generated in its first lines (the listing checks this while it reads)."""
    return bool(_MARKER.search("\n".join(text.split("\n", MARKER_LINES)[:MARKER_LINES])))


def path_rule(path: str) -> Excluded | None:
    pure = PurePosixPath(path)
    folders = set(pure.parts[:-1])
    if folders & VENDOR_DIRS:
        return Excluded.VENDORED
    if folders & BUILD_DIRS or _BUILT_NAME.search(pure.name):
        return Excluded.BUILD_OUTPUT
    return None


@dataclass(frozen=True)
class AttributeRule:
    folder: str  # the .gitattributes file's folder ("" at the root)
    pattern: str
    reason: Excluded | None  # None: the attribute unset (`-linguist-generated`, `=false`)
    attribute: str


_ATTRIBUTES = {"linguist-generated": Excluded.LINGUIST_GENERATED, "linguist-vendored": Excluded.LINGUIST_VENDORED}


def attribute_rules(folder: str, text: str) -> list[AttributeRule]:
    """The linguist rules of one `.gitattributes`, in order (a later line overrides an earlier one)."""
    rules = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        for attribute in fields[1:]:
            name, _, value = attribute.lstrip("-!").partition("=")
            if name in _ATTRIBUTES:
                unset = attribute.startswith(("-", "!")) or value.lower() in ("false", "0")
                rules.append(AttributeRule(folder, fields[0], None if unset else _ATTRIBUTES[name], name))
    return rules


def _matches(rule: AttributeRule, path: str) -> bool:
    relative = path[len(rule.folder) + 1:] if rule.folder else path
    if rule.folder and not path.startswith(rule.folder + "/"):
        return False
    pattern = rule.pattern.removeprefix("/")
    if "/" not in rule.pattern.rstrip("/"):  # no slash: matches a name at any depth, or a folder on the way
        return any(fnmatch.fnmatchcase(part, pattern.rstrip("/")) for part in relative.split("/"))
    pattern = pattern.removesuffix("/**").rstrip("/")
    return fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, pattern + "/*") \
        or relative.startswith(pattern + "/")


def attribute_marks(rules: Iterable[AttributeRule], paths: Iterable[str]) -> dict[str, Excluded]:
    """Each path's linguist mark, the last matching rule of each attribute winning (git's order)."""
    rules = sorted(rules, key=lambda r: r.folder.count("/") + bool(r.folder))  # deeper files after shallower
    marks: dict[str, Excluded] = {}
    for path in paths:
        state: dict[str, Excluded | None] = {}
        for rule in rules:
            if _matches(rule, path):
                state[rule.attribute] = rule.reason
        reason = state.get("linguist-generated") or state.get("linguist-vendored")
        if reason is not None:
            marks[path] = reason
    return marks


def gitattributes_folder(path: str) -> str:
    folder = posixpath.dirname(path)
    return "" if folder == "." else folder


class NoSourceFilesError(RuntimeError):
    """A subject with no candidate file in the languages looked for: the task fails closed."""


@dataclass(frozen=True)
class Selection:
    languages: tuple[str, ...]  # looked for
    declared: bool  # by the task or its data set; else every registered language present
    paths: tuple[str, ...]  # the candidates, in listing order
    excluded: dict[str, str]  # path -> `Excluded` value, files of those languages that are not candidates


def select(paths: list[str], marks: dict[str, Excluded], declared: tuple[str, ...]) -> Selection:
    """The candidate files of a listing for a task declaring `declared` (empty: every registered
    language present); raises `NoSourceFilesError` naming what was looked for and what was found."""
    wanted = tuple(languages.named(name).name for name in declared)
    present = {language_of(p) for p in paths} - {None}
    looked_for = wanted or tuple(sorted(language.name for language in present))
    kept, excluded = [], {}
    for path in paths:
        language = language_of(path)
        if language is None or language.name not in looked_for:
            continue
        reason = marks.get(path) or path_rule(path)
        if reason is None:
            kept.append(path)
        else:
            excluded[path] = reason.value
    if not kept:
        suffixes = Counter(PurePosixPath(p).suffix or PurePosixPath(p).name for p in paths)
        found = ", ".join(f"{s} ({n})" for s, n in suffixes.most_common(8)) or "no readable file"
        if looked_for:
            what = (f"{', '.join(looked_for)} ({', '.join(s for n in looked_for for s in languages.named(n).suffixes)}; "
                    f"{'declared' if wanted else 'the registered languages the subject holds'})")
        else:
            what = f"any registered language ({', '.join(language.name for language in languages.REGISTERED)})"
        raise NoSourceFilesError(f"no candidate file: looked for {what}, {len(excluded)} generated or vendored "
                                 f"left out; the subject holds {found}")
    return Selection(looked_for, bool(wanted), tuple(kept), excluded)

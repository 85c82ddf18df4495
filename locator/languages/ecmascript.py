"""What JavaScript and TypeScript share: their test paths and `import`/`export … from`/`require`
references to files of the subject (relative specifiers; a `.js` written for a `.ts` file resolves)."""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePosixPath

from locator.languages.references import FileIndex, first_existing, joined

_TEST_DIRS = {"__tests__", "__mocks__", "test", "tests"}
_TEST_NAME = re.compile(r"\.(test|spec)\.[^.]+$")


def is_test(path: str) -> bool:
    """`__tests__/`, `test/`, `tests/`, `*.test.*` and `*.spec.*`."""
    pure = PurePosixPath(path)
    return any(part in _TEST_DIRS for part in pure.parts[:-1]) or bool(_TEST_NAME.search(pure.name))


# a V8 / Node stack frame: `at Router.route (src/router.ts:12:5)`, `at src/x.js:3:1`, `at new Foo (…)`
ECMASCRIPT_FRAME = re.compile(
    r"^\s*at (?:new |async )?(?:(?:(?P<owner>[A-Za-z_$][\w$]*)\.)?(?P<name>[A-Za-z_$][\w$]*) \()?"
    r"(?:file://)?(?P<path>[^\s():]+\.(?:[cm]?[jt]sx?)):\d+:\d+\)?$")

_SPECIFIER = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(['"])(\.{1,2}/[^'"]*)\1""")
RESOLVED_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")


def references(path: str, line: str, index: FileIndex) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for _, written in _SPECIFIER.findall(line):
        base = joined(posixpath.dirname(path), written)
        if base is None:
            continue
        stem = base[: -len(PurePosixPath(base).suffix)] if PurePosixPath(base).suffix in (".js", ".mjs", ".cjs") else None
        candidates = [base, *(base + s for s in RESOLVED_SUFFIXES), *(f"{base}/index{s}" for s in RESOLVED_SUFFIXES)]
        if stem:  # TypeScript's ESM convention: `./x.js` written for `x.ts`
            candidates += [stem + s for s in (".ts", ".tsx", ".mts", ".cts")]
        target = first_existing(index, candidates)
        if target is not None and target != path:
            found.append((target, written))
    return found

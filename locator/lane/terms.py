"""Bounded terms from an observed failure trace (seed 001): at most `max_ast_terms` AST/member names,
`max_owner_terms` qualified owners (`Owner.member`, `module.Class`) and `max_argument_terms`
named-argument or object-field names, innermost first (the exception line, then the frames from the
innermost). Rejected: whitespace-separated pseudo-qualifiers (only `a.b` written without spaces
qualifies), file extensions, test names, and common value/type noise."""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass

from pydantic import Field

from locator.languages import REGISTERED, named
from locator.settings import Settings

_EXCEPTION = re.compile(r"^(?P<qualified>(?:[A-Za-z_]\w*\.)*(?P<name>[A-Z]\w*)):")
_DOTTED = re.compile(r"(?<![\w.])(?P<left>[A-Za-z_]\w*)\.(?P<right>[A-Za-z_]\w*)(?P<call>\s*\()?")
_CALL = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w*)\s*\(")
_NAMED_ARGUMENT = re.compile(r"(?<![\w.])(?P<name>[a-z_]\w*)\s*=(?!=)|argument '(?P<quoted>\w+)'")
FILE_EXTENSIONS = frozenset("py pyc pyi pyx pxd txt json yaml yml cfg toml ini md rst csv html xml js ts c h cpp so "
                            "whl gz zip log lock".split())
NOISE = frozenset(dir(builtins)) | frozenset("self cls args kwargs value values data obj result x y i j k e "
                                             "module lambda listcomp genexpr dictcomp setcomp Traceback".split())
_STRING = re.compile(r"""(?P<q>['"]).*?(?P=q)""")  # literals hold values, not names


def _is_test_name(name: str) -> bool:
    return name.startswith(("test_", "Test")) or name.endswith("_test")


def _keep(name: str) -> bool:
    return (len(name) > 1 and name not in NOISE and not _is_test_name(name)
            and not (name.startswith("__") and name.endswith("__")))


@dataclass(frozen=True)
class Terms:
    ast: tuple[str, ...]
    owners: tuple[str, ...]
    arguments: tuple[str, ...]


class TraceTerms(Settings):
    max_ast_terms: int = Field(ge=0)
    max_owner_terms: int = Field(ge=0)
    max_argument_terms: int = Field(ge=0)

    def extract(self, trace: str, languages: tuple[str, ...] = ()) -> Terms:
        """Terms of `trace`, its frames read by the stack-frame patterns of the task's declared
        `languages` (every registered language's when none is declared): a frame's function is an
        AST term, `Owner.function` an owner term, as a Python traceback's `in name` line is."""
        frames = [p for language in (tuple(named(n) for n in languages) or REGISTERED) for p in language.frames]
        ast: dict[str, None] = {}
        owners: dict[str, None] = {}
        arguments: dict[str, None] = {}
        for line in reversed(trace.split("\n")):
            stripped = line.strip()
            frame = next((m for p in frames if (m := p.search(stripped)) and m.groupdict().get("name")), None)
            if frame:
                if _keep(frame["name"]):
                    ast.setdefault(frame["name"])
                    owner = re.split(r"::|\.", frame.groupdict().get("owner") or "")[-1]
                    if owner[:1].isupper() and _keep(owner):
                        owners.setdefault(f"{owner}.{frame['name']}")
                continue
            if any(p.search(stripped) for p in frames):
                continue  # a frame's location line: a path, no names
            exception = _EXCEPTION.match(stripped)
            if exception:
                if _keep(exception["name"]):
                    ast.setdefault(exception["name"])
                parts = exception["qualified"].split(".")
                if len(parts) >= 2 and parts[-2].islower():
                    owners.setdefault(f"{parts[-2]}.{parts[-1]}")
                stripped = stripped[exception.end():]
            for m in _NAMED_ARGUMENT.finditer(stripped):
                name = m["name"] or m["quoted"]
                if _keep(name):
                    arguments.setdefault(name)
            stripped = _STRING.sub("''", stripped)
            for m in _DOTTED.finditer(stripped):
                left, right = m["left"], m["right"]
                if right.lower() in FILE_EXTENSIONS or not _keep(right):
                    continue
                if left[:1].isupper() or (left.islower() and right[:1].isupper() and left not in NOISE):
                    if _keep(left):
                        owners.setdefault(f"{left}.{right}")  # `Owner.member` or `module.Class`
                    ast.setdefault(right)
                elif m["call"]:
                    ast.setdefault(right)  # a method called on an object
                else:
                    arguments.setdefault(right)  # an object field
            for m in _CALL.finditer(stripped):
                if _keep(m["name"]):
                    ast.setdefault(m["name"])
        return Terms(tuple(ast)[: self.max_ast_terms], tuple(owners)[: self.max_owner_terms],
                     tuple(arguments)[: self.max_argument_terms])

"""`locator=agentless_style`: the Agentless peer's hierarchical localization, prompted, over any
System One backend that can generate (local_llm, openai_logprobs).

Three levels, each one generation (greedy) whose text is parsed against what the model was shown:
1. files: the task and the repository's file paths -> the files one would edit (paths not in the
   listing are dropped and counted);
2. elements: the skeleton (signature lines, from `ctx.outline`) of the first `element_files` of them
   -> the classes, functions and methods involved (`class: Name`, `function: name`, `method: Owner.name`);
3. lines (`line_level: true`): the numbered code of those elements (`ctx.read`, at most
   `max_element_lines` each) -> the lines to edit (`line: N`), each widened by `context_lines`.
A file's evidence is its chosen lines, else its chosen elements whole. The prompts are the YAML's.

What the model is shown counts as read: skeleton signature lines and element code through `ctx`;
file paths are listing metadata. With more than `max_listed_files` candidates, the listing keeps the
paths sharing most words with the task (path words only: nothing is read to choose them), and says
so in a decision event: Agentless shows the whole tree, which no 2,048-token context holds.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from locator.base import LocatorContext, LocatorOutput
from locator.languages import language_of
from locator.outline import Definition
from locator.result import Confidence, Evidence, Producer, ResultFile
from locator.settings import Settings
from locator.task import Task

_WORD = re.compile(r"[a-z0-9]+")
# Agentless's `class: Name` / `function: name` / `method: Class.name`, and the `class Name` / `def name`
# a small model writes instead
_ELEMENT = re.compile(r"^\s*(?:[-*\d.]+\s*)?(class|function|method|def)\b\s*:?\s*([\w.]+)", re.IGNORECASE | re.MULTILINE)
_LINE = re.compile(r"\bline\s*:?\s*(\d+)", re.IGNORECASE)


class LevelPrompts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    system: str
    files: str  # {task}, {listing}, {top_files}
    elements: str  # {task}, {skeletons}
    lines: str  # {task}, {code}


class MaxTokens(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    files: int = Field(ge=1)
    elements: int = Field(ge=1)
    lines: int = Field(ge=1)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def parse_paths(text: str, listed: list[str]) -> tuple[list[str], int]:
    """Listed paths in the order the text names them, and how many named paths were not listed."""
    known, found, unknown = set(listed), [], 0
    for raw in re.split(r"[\s`'\",]+", text):
        path = raw.strip().lstrip("./")
        if not path or "/" not in path and language_of(path) is None:
            continue
        if path in known:
            if path not in found:
                found.append(path)
        else:
            suffix = [p for p in listed if p.endswith("/" + path)]
            if len(suffix) == 1 and suffix[0] not in found:
                found.append(suffix[0])
            elif not suffix:
                unknown += 1
    return found, unknown


def parse_elements(text: str, definitions: list[Definition]) -> list[Definition]:
    """The definitions the text names (by qualified name, else by last name when that is unique)."""
    by_qualname = {d.qualname: d for d in definitions}
    by_name: dict[str, list[Definition]] = {}
    for d in definitions:
        by_name.setdefault(d.qualname.rsplit(".", 1)[-1], []).append(d)
    chosen: list[Definition] = []
    for _, name in _ELEMENT.findall(text):
        name = name.rstrip(".:")
        match = by_qualname.get(name) or (by_name.get(name.rsplit(".", 1)[-1]) or [None, None])
        found = match if isinstance(match, Definition) else (match[0] if len(match) == 1 else None)
        if found is not None and found not in chosen:
            chosen.append(found)
    return chosen


class AgentlessStyleLocator(Settings):
    name: ClassVar[str] = "agentless_style"
    uses_system_one: ClassVar[bool] = True
    top_files: int = Field(ge=1, description="files asked for at the file level")
    element_files: int = Field(ge=1, description="files whose skeleton goes to the element level")
    line_level: bool
    max_listed_files: int = Field(ge=1)
    max_skeleton_lines: int = Field(ge=1, description="signature lines shown per file")
    max_element_lines: int = Field(ge=1, description="code lines shown per element at the line level")
    max_elements: int = Field(ge=1, description="elements taken to the line level")
    context_lines: int = Field(ge=0, description="lines either side of a chosen line in its evidence")
    max_tokens: MaxTokens
    prompts: LevelPrompts

    def _chat(self, ctx: LocatorContext, user: str, max_tokens: int) -> str:
        messages = [{"role": "system", "content": self.prompts.system}, {"role": "user", "content": user}]
        return ctx.system_one.generate(messages, max_tokens).text

    def _listing(self, task: Task, ctx: LocatorContext) -> list[str]:
        paths = [f.path for f in ctx.source_files()]
        if len(paths) <= self.max_listed_files:
            return paths
        words = _words(task.text)
        kept = sorted(paths, key=lambda p: (-len(_words(p) & words), p))[: self.max_listed_files]
        ctx.decide(listing="cut by path words", candidates=len(paths), listed=len(kept))
        return sorted(kept)

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        with ctx.stage("files") as stage:
            listing = self._listing(task, ctx)
            text = self._chat(ctx, self.prompts.files.format(task=task.text, listing="\n".join(listing),
                                                             top_files=self.top_files), self.max_tokens.files)
            files, unknown = parse_paths(text, listing)
            files = files[: self.top_files]
            stage.set(listed=len(listing), named=len(files), unlisted_paths_named=unknown)
        chosen: dict[str, list[Definition]] = {}
        with ctx.stage("elements") as stage:
            skeletons, definitions = [], {}
            for path in files[: self.element_files]:
                outline = ctx.outline(path)
                definitions[path] = list(outline.definitions)
                shown = sorted(outline.signatures.items())[: self.max_skeleton_lines]
                skeletons.append(f"### {path}\n" + "\n".join(text for _, text in shown))
            if skeletons:
                text = self._chat(ctx, self.prompts.elements.format(task=task.text, skeletons="\n\n".join(skeletons)),
                                  self.max_tokens.elements)
                for path, defs in definitions.items():
                    section = _section(text, path, list(definitions))
                    chosen[path] = parse_elements(section, defs)[: self.max_elements]
            stage.set(elements=sum(len(v) for v in chosen.values()))
        lines: dict[str, list[int]] = {}
        if self.line_level and any(chosen.values()):
            with ctx.stage("lines") as stage:
                blocks = []
                for path, elements in chosen.items():
                    for element in elements:
                        end = min(element.end_line, element.start_line + self.max_element_lines - 1)
                        read = ctx.read(path, element.start_line, end)
                        numbered = "\n".join(f"{read.start_line + i} {line}" for i, line in enumerate(read.lines))
                        blocks.append(f"### {path} ({element.kind} {element.qualname})\n{numbered}")
                text = self._chat(ctx, self.prompts.lines.format(task=task.text, code="\n\n".join(blocks)),
                                  self.max_tokens.lines)
                for path, elements in chosen.items():
                    section = _section(text, path, list(chosen))
                    wanted = {int(n) for n in _LINE.findall(section)}
                    lines[path] = sorted(n for n in wanted if any(e.contains(n) for e in elements))
                stage.set(lines=sum(len(v) for v in lines.values()))
        return LocatorOutput(files=[self._file(path, rank, chosen.get(path, []), lines.get(path, []), ctx)
                                    for rank, path in enumerate(files)],
                             confidence_semantics="agentless_rank: 1 - rank / top_files (the model's order)",
                             producer=Producer(system="loclab agentless_style", confidence_semantics="agentless_rank"))

    def _file(self, path: str, rank: int, elements: list[Definition], lines: list[int], ctx: LocatorContext) -> ResultFile:
        if lines:
            total = ctx.stat(path).line_count
            spans = _merge([(max(1, n - self.context_lines), min(total, n + self.context_lines)) for n in lines])
            reason = "lines the model chose to edit"
        else:
            spans = [(e.start_line, e.end_line) for e in elements]
            reason = "elements the model chose"
        evidence = [Evidence(id=f"{path}:{start}-{end}", start_line=start, end_line=end, reason=reason)
                    for start, end in spans]
        score = max(0.0, 1.0 - rank / self.top_files)
        return ResultFile(path=path, confidence=Confidence.of(score, "agentless_rank", "the model's file order"),
                          reason="named by the model at the file level", evidence=evidence)


def _section(text: str, path: str, paths: list[str]) -> str:
    """The part of a multi-file answer about `path`: from its mention to the next file's, or the
    whole text when it names no file (a single-file answer)."""
    starts = sorted((text.find(p), p) for p in paths if text.find(p) >= 0)
    if not starts:
        return text
    for i, (start, p) in enumerate(starts):
        if p == path:
            end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
            return text[start:end]
    return ""


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged

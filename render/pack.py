"""`render_pack`: a LocalizationResult as the inline context pack an editing agent receives.

Sections in rank order (one per result file entry; a path listed again refers back to what its
earlier section sent), fitted into `cap_tokens - epilogue_floor_tokens`; then the pointer list
(files with nothing shown) and the note, fitted into what is left of the cap with exact o200k counts
of the whole pack. The sections do not depend on the version: `measured` and `flagged` differ only
in how the note decides what to claim, so an A/B of the two compares notes on identical source.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from locator.result import LocalizationResult
from locator.system_one.tokens import count_tokens
from locator.task import Record
from render import notes as n
from render.labels import shortest_unique_suffixes
from render.sections import FileSource, Section, SourceOf, TrimSite, elided_names, fit_section, plan
from render.settings import RenderSettings, RenderVersion
from render.spans import LineRange, elided_wanted_spans, merge, short_label, subtract

SCHEMA_VERSION = 1
# Seed 002's defect: the flag was set at the trim sites, but the oversize window never set it.
FLAGGED_SITES = frozenset({TrimSite.FOLD, TrimSite.BUDGET})


class PackSpan(Record):
    start: int = Field(ge=1)
    end: int = Field(ge=1)
    name: str | None = None


class PackSection(Record):
    path: str
    role: str
    line_count: int
    wanted: list[PackSpan]
    sent: list[PackSpan]
    back_referenced: list[PackSpan]
    trim_sites: list[TrimSite] = Field(description="sites that cut this section (what the flagged rule reads)")
    elided: list[PackSpan] = Field(description="wanted spans not fully sent: measured, whatever cut them")
    tokens: int


class PointerEntry(Record):
    path: str
    role: str
    ranges: list[PackSpan]
    text: str


class ContextPack(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    task: str
    version: RenderVersion
    cap_tokens: int
    sections: list[PackSection]
    pointers: list[PointerEntry] = Field(description="every file with nothing shown, in rank order")
    pointer_entries: int = Field(description="pointer entries the epilogue listed")
    note: n.NoteKind
    trimmed_files: list[str] = Field(description="files whose section elided a wanted span (measured)")
    epilogue: str
    text: str
    tokens: int

    @property
    def trimmed(self) -> bool:
        return bool(self.trimmed_files)


def _spans(ranges) -> list[PackSpan]:
    return [PackSpan(start=r.start_line, end=r.end_line) for r in ranges]


def _pointer(path: str, role: str, ranges: list[LineRange], settings: RenderSettings, missing: bool) -> PointerEntry:
    labels = [short_label(r) for r in ranges[:settings.pointer_ranges]] + (["…"] if len(ranges) > settings.pointer_ranges else [])
    where = " · not in the subject" if missing else (f" · lines {', '.join(labels)}" if labels else "")
    return PointerEntry(path=path, role=role, ranges=_spans(ranges), text=f"- {path} · {role}{where}")


def _sections(result: LocalizationResult, source_of: SourceOf, settings: RenderSettings):
    budget = settings.cap_tokens - settings.epilogue_floor_tokens
    sources: dict[str, FileSource | None] = {}
    shown: dict[str, list[LineRange]] = {}
    sections: list[tuple[Section, FileSource]] = []
    pointers: list[PointerEntry] = []
    entities = list(result.ranked_entities or [])
    for entry in result.files:
        if entry.path not in sources:
            text = source_of(entry.path)
            sources[entry.path] = None if text is None else FileSource.of(entry.path, text)
        source = sources[entry.path]
        role = entry.role.value
        if source is None:
            pointers.append(_pointer(entry.path, role, merge(LineRange(e.start_line, e.end_line) for e in entry.evidence),
                                     settings, missing=True))
            continue
        p = plan(entry, source, entities, shown.get(entry.path, []), settings)
        section = fit_section(p, budget, settings) if p.wanted else None
        if section is None:
            pointers.append(_pointer(entry.path, role, merge(w.range for w in p.wanted), settings, missing=False))
            continue
        budget -= section.tokens
        shown[entry.path] = merge([*shown.get(entry.path, []), *section.sent])
        sections.append((section, source))
    return sections, pointers


def render_pack(result: LocalizationResult, source_of: SourceOf, settings: RenderSettings) -> ContextPack:
    sections, pointers = _sections(result, source_of, settings)
    body = "".join(s.text + "\n" for s, _ in sections)
    elided = {id(s): elided_wanted_spans(s.wanted, s.sent, s.back_referenced) for s, _ in sections}
    trimmed = list(dict.fromkeys(s.path for s, _ in sections if elided[id(s)]))
    shown = len({s.path for s, _ in sections})
    if not result.files:
        candidates, note_first = [n.no_files_note()], True
    elif not sections:
        candidates, note_first = [n.nothing_shown_note()], True
    elif settings.version == RenderVersion.FLAGGED:
        flag = any(s.trim_sites & FLAGGED_SITES for s, _ in sections)
        candidates, note_first = [n.flagged_note(shown, flag)], True
    elif not trimmed:
        candidates, note_first = [n.complete_note(shown)], True
    else:
        labels = shortest_unique_suffixes([s.path for s, _ in sections] + [p.path for p in pointers])
        names = list(dict.fromkeys(name for s, source in sections for name in elided_names(
            source, subtract([w.range for w in elided[id(s)]], [*s.sent, *s.back_referenced]))))
        candidates, note_first = n.trimmed_notes(shown, [labels[p] for p in trimmed], names[:settings.note_names],
                                                          len(names) > settings.note_names), False
    epilogue = n.fit_epilogue(lambda e: count_tokens(body + e) <= settings.cap_tokens, candidates,
                              [p.text for p in pointers], note_first)
    text = body + epilogue.text
    return ContextPack(
        task=result.task, version=settings.version, cap_tokens=settings.cap_tokens,
        sections=[PackSection(path=s.path, role=s.role, line_count=s.line_count,
                              wanted=[PackSpan(start=w.range.start_line, end=w.range.end_line, name=w.name) for w in s.wanted],
                              sent=_spans(s.sent), back_referenced=_spans(s.back_referenced),
                              trim_sites=sorted(s.trim_sites),
                              elided=[PackSpan(start=w.range.start_line, end=w.range.end_line, name=w.name) for w in elided[id(s)]],
                              tokens=s.tokens)
                  for s, _ in sections],
        pointers=pointers, pointer_entries=epilogue.pointer_entries, note=epilogue.note.kind, trimmed_files=trimmed,
        epilogue=epilogue.text, text=text, tokens=count_tokens(text))

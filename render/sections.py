"""File sections: each sets out to deliver its wanted spans, and records what it actually sent.

A section's wanted spans are its evidence ranges and the definition ranges of the result's
`Owner.member` entities in that file. Three code paths elide wanted source, each recording the
site it trimmed at (`TrimSite`): a range longer than `max_range_lines` is windowed to its head and
tail (the smaller wanted spans inside it are kept whole); new lines too few to fence beside lines an earlier section of the same file already sent are
folded into that back-reference; a section over the remaining budget is cut to what fits. Whether
a section is complete is not read from those records but measured (`spans.elided_wanted_spans`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from locator.languages import language_of
from locator.outline import Definition, definitions
from locator.result import ResultFile
from locator.system_one.tokens import count_tokens
from render.settings import RenderSettings
from render.spans import LineRange, WantedSpan, merge, short_label, size, subtract

SourceOf = Callable[[str], str | None]
ELISION = "⋯"
FENCE = "```"


def opening_fence(path: str) -> str:
    """A section's fence opens with its language's name (none for a file of no registered language)."""
    language = language_of(path)
    return FENCE + (language.fence if language is not None else "")


class TrimSite(StrEnum):
    WINDOW = "window"  # an oversize range cut to head + tail
    FOLD = "fold"  # new lines too few to fence, folded into a back-reference
    BUDGET = "budget"  # cut to the room left under the cap


_SITE_WORDING = {TrimSite.WINDOW: "range windowed", TrimSite.FOLD: "too few to fence beside lines shown above",
                 TrimSite.BUDGET: "over the cap"}


@dataclass(frozen=True)
class FileSource:
    path: str
    lines: tuple[str, ...]
    definitions: tuple[Definition, ...]

    @classmethod
    def of(cls, path: str, text: str) -> "FileSource":
        return cls(path, tuple(text.splitlines()), tuple(definitions(path, text)))


def member_definitions(source: FileSource) -> list[Definition]:
    """Definitions an elision may be named by: functions and methods, never containers (a class
    too big for one section would come back trimmed again)."""
    return [d for d in source.definitions if d.kind != "class"]


def wanted_spans(entry: ResultFile, source: FileSource, entities: list[str]) -> list[WantedSpan]:
    """Evidence ranges (clipped to the file) and the definition ranges of the result's member
    entities in this file (`path:Owner.member`, `path:function`)."""
    n = len(source.lines)
    wanted = [WantedSpan(LineRange(e.start_line, min(e.end_line, n)), e.id)
              for e in entry.evidence if e.start_line <= n]
    members = {d.qualname: d for d in member_definitions(source)}
    prefix = f"{entry.path}:"
    for entity in entities:
        if entity.startswith(prefix) and (found := members.get(entity[len(prefix):])) is not None:
            wanted.append(WantedSpan(LineRange(found.start_line, found.end_line), found.qualname))
    return wanted


def elided_names(source: FileSource, elided: list[LineRange]) -> list[str]:
    """Member definitions that lose lines to an elision, in file order."""
    names: dict[str, None] = {}
    for d in member_definitions(source):
        if any(d.start_line <= r.end_line and r.start_line <= d.end_line for r in elided):
            names.setdefault(d.qualname, None)
    return list(names)


@dataclass(frozen=True)
class Section:
    path: str
    role: str
    line_count: int
    wanted: tuple[WantedSpan, ...]
    sent: tuple[LineRange, ...]
    back_referenced: tuple[LineRange, ...]
    trim_sites: frozenset[TrimSite]
    text: str
    tokens: int


@dataclass
class _Plan:
    """A section before the budget: what it would send, what it refers back to, what it elided where."""

    entry: ResultFile
    source: FileSource
    wanted: list[WantedSpan]
    sent: list[LineRange]
    back_referenced: list[LineRange]
    elided_at: dict[TrimSite, list[LineRange]] = field(default_factory=dict)


def plan(entry: ResultFile, source: FileSource, entities: list[str], shown_before: list[LineRange],
         settings: RenderSettings) -> _Plan:
    wanted = wanted_spans(entry, source, entities)
    pieces: list[LineRange] = []
    cut: list[LineRange] = []
    for w in wanted:  # each oversize span on its own: the smaller spans inside it are still sent whole
        if size(w.range) <= settings.max_range_lines:
            pieces.append(w.range)
            continue
        head = LineRange(w.range.start_line, w.range.start_line + settings.window_head_lines - 1)
        tail = [LineRange(w.range.end_line - settings.window_tail_lines + 1, w.range.end_line)] if settings.window_tail_lines else []
        pieces += [head, *tail]
        cut += subtract([w.range], [head, *tail])
    windowed = merge(pieces)
    elided_at: dict[TrimSite, list[LineRange]] = {}
    if cut := subtract(cut, windowed):
        elided_at[TrimSite.WINDOW] = cut
    back = subtract(windowed, subtract(windowed, shown_before))  # the planned lines already sent above
    new = subtract(windowed, shown_before)
    if back:
        folded = [r for r in new if size(r) < settings.min_fence_lines]
        if folded:
            elided_at[TrimSite.FOLD] = folded
            new = [r for r in new if size(r) >= settings.min_fence_lines]
    return _Plan(entry, source, wanted, new, back, elided_at)


def _markers(gap: LineRange, wanted_lines: set[int], source: FileSource, sites: dict[TrimSite, list[LineRange]],
             settings: RenderSettings, edge: bool) -> list[str]:
    """One marker per run of the gap: wanted lines not sent are elided (named, with the site that
    cut them when one recorded it); other lines are just not shown. At the file's edges only the
    stretch that holds elided lines is marked."""
    runs: list[tuple[LineRange, bool]] = []
    for line in range(gap.start_line, gap.end_line + 1):
        wanted = line in wanted_lines
        if runs and runs[-1][1] == wanted and runs[-1][0].end_line == line - 1:
            runs[-1] = (LineRange(runs[-1][0].start_line, line), wanted)
        else:
            runs.append((LineRange(line, line), wanted))
    if edge:
        elided = [i for i, (_, wanted) in enumerate(runs) if wanted]
        runs = runs[elided[0]:elided[-1] + 1] if elided else []
    out = []
    for r, wanted in runs:
        if not wanted:
            out.append(f"{ELISION} lines {short_label(r)} not shown")
            continue
        why = [_SITE_WORDING[s] for s in TrimSite if any(c.start_line <= r.end_line and r.start_line <= c.end_line for c in sites.get(s, []))]
        names = elided_names(source, [r])
        shown = names[:settings.marker_names] + (["…"] if len(names) > settings.marker_names else [])
        out.append(f"{ELISION} lines {short_label(r)} elided" + (f" ({', '.join(why)})" if why else "")
                   + (f": {', '.join(shown)}" if shown else ""))
    return out


def render_section(p: _Plan, sent: list[LineRange], settings: RenderSettings,
                   elided_at: dict[TrimSite, list[LineRange]]) -> str:
    source, n = p.source, len(p.source.lines)
    wanted_lines = {i for w in p.wanted for i in range(w.range.start_line, w.range.end_line + 1)}
    items = sorted([(r, False) for r in sent] + [(r, True) for r in p.back_referenced], key=lambda item: item[0])
    shown = ", ".join(short_label(r) for r in sent) or "none"
    body: list[str] = []
    cursor = 1
    for r, is_back in items:
        if r.start_line > cursor:
            body += _markers(LineRange(cursor, r.start_line - 1), wanted_lines, source, elided_at, settings, edge=cursor == 1)
        if is_back:
            body.append(f"{ELISION} lines {short_label(r)} shown above")
        else:
            body += [f"{i:>6}\t{source.lines[i - 1]}" for i in range(r.start_line, r.end_line + 1)]
        cursor = r.end_line + 1
    if cursor <= n:
        body += _markers(LineRange(cursor, n), wanted_lines, source, elided_at, settings, edge=True)
    # every body line starts with a line number or a marker, so no source line can close the fence
    return "\n".join([f"### {p.entry.path} · {p.entry.role.value} · lines {shown} of {n}", opening_fence(p.entry.path),
                      *body, FENCE]) + "\n"


def _first_lines(ranges: list[LineRange], k: int) -> list[LineRange]:
    kept: list[LineRange] = []
    for r in ranges:
        if k <= 0:
            break
        kept.append(LineRange(r.start_line, min(r.end_line, r.start_line + k - 1)))
        k -= size(kept[-1])
    return kept


def fit_section(p: _Plan, room: int, settings: RenderSettings) -> Section | None:
    """The section within `room` tokens: whole if it fits, else cut to the longest prefix of its
    lines that fits; None (a pointer entry) when fewer than `min_section_lines` would fit."""
    def build(sent: list[LineRange], sites: dict[TrimSite, list[LineRange]]) -> Section:
        text = render_section(p, sent, settings, sites)
        return Section(p.entry.path, p.entry.role.value, len(p.source.lines), tuple(p.wanted), tuple(sent),
                       tuple(p.back_referenced), frozenset(s for s, r in sites.items() if r), text, count_tokens(text))

    whole = build(p.sent, p.elided_at)
    if whole.tokens <= room:
        return whole
    total = sum(size(r) for r in p.sent)
    low, high, best = 0, total - 1, None
    while low <= high:  # the longest prefix that fits (tokens grow with lines)
        k = (low + high) // 2
        kept = _first_lines(p.sent, k)
        candidate = build(kept, {**p.elided_at, TrimSite.BUDGET: subtract(p.sent, kept)})
        if candidate.tokens <= room:
            best, low = (k, candidate), k + 1
        else:
            high = k - 1
    if best is None or best[0] < min(settings.min_section_lines, total):
        return None
    return best[1]

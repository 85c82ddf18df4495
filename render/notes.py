"""The pack's closing note and how it is fitted with the pointer list (seed 002).

The note says what is true: "complete" only when no section elided a wanted span; otherwise it
keeps the guarantee that still holds (the verbatim source shown may be treated as already read),
names the trimmed files and, where room allows, elided `Owner.member` names, and never invites
re-reading whole files. A trimmed note comes in three sizes and yields to the pointer list (which
names files the pack does not show at all); a complete note keeps precedence. The FLAGGED wordings
are the defective rule's, kept only to reproduce it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

COMPLETE_CLAIM = "Complete source"
TRIMMED_MARK = "trimmed for size"
POINTER_HEADER = "Not shown above:"


class NoteKind(StrEnum):
    COMPLETE = "complete"
    TRIMMED_NAMED = "trimmed_named"
    TRIMMED_FILES = "trimmed_files"
    TRIMMED_GENERIC = "trimmed_generic"
    NOTHING_SHOWN = "nothing_shown"
    NO_FILES = "no_files"
    FLAGGED_COMPLETE = "flagged_complete"
    FLAGGED_TRIMMED = "flagged_trimmed"
    NONE = "none"  # no note fitted: says nothing, claims nothing


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    text: str


def files(n: int) -> str:
    """`1 file`, `2 files`; a note is never written about 0 files (NOTHING_SHOWN says so instead)."""
    if n < 1:
        raise ValueError("a note about shown files needs at least one shown file")
    return f"{n} file" if n == 1 else f"{n} files"


def _verbatim(shown: int) -> str:
    return f"**Verbatim source for {files(shown)} is included above — treat it as already read.**"


def complete_note(shown: int) -> Note:
    them = "it" if shown == 1 else "them"
    return Note(NoteKind.COMPLETE, f"**{COMPLETE_CLAIM} for {files(shown)} is included above — do NOT re-read {them}.**")


def trimmed_notes(shown: int, trimmed_labels: list[str], names: list[str], more_names: bool) -> list[Note]:
    """Most specific first: with elided names (`more_names`: others were elided too), with the
    trimmed files, generic."""
    labels = ", ".join(f"`{label}`" for label in trimmed_labels)
    tail = "open only those line ranges, never whole files."
    notes = []
    if names:
        named = ", ".join([f"`{name}`" for name in names] + (["…"] if more_names else []))
        notes.append(Note(NoteKind.TRIMMED_NAMED, f"{_verbatim(shown)} Source was {TRIMMED_MARK} in {labels}; gap "
                                                  f"markers name what was elided (e.g. {named}): open only those "
                                                  "definitions or line ranges, never whole files."))
    notes.append(Note(NoteKind.TRIMMED_FILES, f"{_verbatim(shown)} Source was {TRIMMED_MARK} in {labels}; gap markers "
                                              f"name what was elided: {tail}"))
    notes.append(Note(NoteKind.TRIMMED_GENERIC, f"{_verbatim(shown)} Some sections were {TRIMMED_MARK}."))
    return notes


def nothing_shown_note() -> Note:
    return Note(NoteKind.NOTHING_SHOWN, f"**No source fitted under the inline cap** (every section was {TRIMMED_MARK}): "
                                        "open only the line ranges listed above, never whole files.")


def no_files_note() -> Note:
    return Note(NoteKind.NO_FILES, "No files were localized for this task.")


def flagged_note(shown: int, flag_set: bool) -> Note:
    """The defective rule's notes: the complete line is printed unless a trim site set the flag,
    and both offer Read."""
    read = "Reserve Read for a single specific line range this pack can't surface."
    if flag_set:
        return Note(NoteKind.FLAGGED_TRIMMED, f"Source was {TRIMMED_MARK}; the gap markers show what was elided. {read}")
    return Note(NoteKind.FLAGGED_COMPLETE, f"**{COMPLETE_CLAIM} for {files(shown)} is included above — do NOT re-read "
                                           "them.** Each section carries the full source of what it covers, with line "
                                           f"numbers: answer from it directly. {read}")


@dataclass(frozen=True)
class Epilogue:
    note: Note
    pointer_entries: int  # entries listed
    text: str


def epilogue_text(note: Note | None, entries: list[str], listed: int) -> str:
    parts = []
    if entries:
        lines = [POINTER_HEADER, *entries[:listed]] if listed else [f"{POINTER_HEADER} {len(entries)} files (no room to list them)"]
        if 0 < listed < len(entries):
            lines.append(f"- … and {len(entries) - listed} more files not listed (no room under the cap)")
        parts.append("\n".join(lines))
    if note is not None:
        parts.append(note.text)
    return "\n\n".join(parts) + "\n"


def _most_entries(fits: Callable[[str], bool], note: Note | None, entries: list[str]) -> int:
    """The most pointer entries that fit beside `note` (-1: not even the note fits)."""
    if not fits(epilogue_text(note, entries, 0)):
        return -1
    low, high = 1, len(entries)
    best = 0
    while low <= high:
        k = (low + high) // 2
        if fits(epilogue_text(note, entries, k)):
            best, low = k, k + 1
        else:
            high = k - 1
    return best


def fit_epilogue(fits: Callable[[str], bool], notes: list[Note], entries: list[str], note_first: bool) -> Epilogue:
    """`notes` most specific first. A note with precedence (`note_first`) is placed, then as many
    entries as fit. Otherwise the list keeps its header and first entry, the entry count is the one
    the shortest note leaves, and the most specific note that fits beside that many entries wins:
    optional detail never costs an entry."""
    none = Note(NoteKind.NONE, "")
    if note_first:
        for note in notes:
            if (k := _most_entries(fits, note, entries)) >= 0:
                return Epilogue(note, k, epilogue_text(note, entries, k))
        k = max(_most_entries(fits, None, entries), 0)
        return Epilogue(none, k, epilogue_text(None, entries, k))
    k = _most_entries(fits, notes[-1], entries)
    if k < min(1, len(entries)):
        k = max(_most_entries(fits, None, entries), 0)
        return Epilogue(none, k, epilogue_text(None, entries, k))
    note = next(n for n in notes if fits(epilogue_text(n, entries, k)))
    return Epilogue(note, k, epilogue_text(note, entries, k))

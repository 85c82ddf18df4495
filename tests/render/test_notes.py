"""The note's wordings and how the epilogue is fitted (seed 002's coverage list)."""

from __future__ import annotations

import re

import pytest

from locator.system_one.tokens import count_tokens
from render import notes as n

OLD_LINE = n.flagged_note(3, flag_set=False).text
ENTRIES = [f"- pkg/module_{i}.py · supporting · lines {i}0-{i}9" for i in range(1, 9)]


def _fits(budget: int):
    return lambda text: len(text) <= budget


def test_the_complete_note_never_offers_read_or_a_re_read():
    note = n.complete_note(2).text
    assert n.COMPLETE_CLAIM in note and "do NOT re-read" in note
    assert not re.search(r"\bRead\b|\bopen\b|Reserve", note)


def test_the_defective_rule_offers_read():
    assert "Reserve Read" in OLD_LINE and "Reserve Read" in n.flagged_note(3, flag_set=True).text


def test_trimmed_notes_keep_the_already_read_guarantee_and_name_files_and_members():
    named, files, generic = n.trimmed_notes(2, ["core.py"], ["Command.main", "Group.invoke"], more_names=True)
    assert [named.kind, files.kind, generic.kind] == [n.NoteKind.TRIMMED_NAMED, n.NoteKind.TRIMMED_FILES,
                                                      n.NoteKind.TRIMMED_GENERIC]
    for note in (named, files, generic):
        assert "treat it as already read" in note.text and n.TRIMMED_MARK in note.text
        assert "omplete" not in note.text  # a trimmed wording never says complete
        assert not re.search(r"\bRead\b|whole files(?!\.)|re-read", note.text)
    assert "never whole files" in named.text and "never whole files" in files.text
    assert "`core.py`" in named.text and "`core.py`" in files.text and "`core.py`" not in generic.text
    assert "`Command.main`, `Group.invoke`, …" in named.text


def test_candidates_shrink_in_order_and_the_generic_note_is_no_longer_than_either_old_note():
    """So a pointer list is never shorter than the defective rule's: the note it yields to is shorter."""
    named, files, generic = n.trimmed_notes(2, ["core.py"], ["Command.main"], more_names=False)
    assert count_tokens(named.text) > count_tokens(files.text) > count_tokens(generic.text)
    assert count_tokens(generic.text) <= count_tokens(OLD_LINE)
    assert count_tokens(generic.text) <= count_tokens(n.flagged_note(3, flag_set=True).text)
    assert "…" not in named.text  # no ellipsis when every elided name is offered


def test_one_file_never_zero_files():
    assert "for 1 file is" in n.complete_note(1).text and "re-read it." in n.complete_note(1).text
    assert "for 1 file is" in n.trimmed_notes(1, ["a.py"], [], more_names=False)[-1].text
    with pytest.raises(ValueError):
        n.files(0)
    assert "0 file" not in n.nothing_shown_note().text


def test_a_complete_note_keeps_precedence_over_pointer_entries():
    note = n.complete_note(2)
    room = len(n.epilogue_text(note, ENTRIES, 2))
    fitted = n.fit_epilogue(_fits(room), [note], ENTRIES, note_first=True)
    assert fitted.note == note and fitted.pointer_entries == 2


def test_a_trimmed_note_leaves_the_pointer_list_its_first_entry():
    notes = n.trimmed_notes(2, ["core.py"], ["Command.main"], more_names=False)
    room = len(n.epilogue_text(notes[-1], ENTRIES, 0)) + 5  # the shortest note fits, but only without entries
    assert len(n.epilogue_text(notes[-1], ENTRIES, 1)) > room >= len(n.epilogue_text(None, ENTRIES, 1))
    fitted = n.fit_epilogue(_fits(room), notes, ENTRIES, note_first=False)
    assert fitted.pointer_entries >= 1 and fitted.note.kind == n.NoteKind.NONE  # the note yields, not the entry
    assert n.POINTER_HEADER in fitted.text and ENTRIES[0] in fitted.text


def test_optional_detail_never_costs_a_pointer_entry():
    notes = n.trimmed_notes(2, ["core.py"], ["Command.main", "Group.invoke"], more_names=False)
    room = len(n.epilogue_text(notes[-1], ENTRIES, 3))  # the generic note with 3 entries
    named_fits = [k for k in range(len(ENTRIES) + 1) if len(n.epilogue_text(notes[0], ENTRIES, k)) <= room]
    assert named_fits and max(named_fits) < 3  # the named note would fit, at the cost of an entry
    fitted = n.fit_epilogue(_fits(room), notes, ENTRIES, note_first=False)
    assert fitted.pointer_entries == 3 and fitted.note.kind != n.NoteKind.TRIMMED_NAMED


def test_with_no_pointer_list_the_most_specific_note_that_fits_wins():
    named, files, generic = n.trimmed_notes(2, ["core.py"], ["Command.main"], more_names=False)
    for room, expected in ((len(named.text) + 1, named), (len(files.text) + 1, files), (len(generic.text) + 1, generic)):
        assert n.fit_epilogue(_fits(room), [named, files, generic], [], note_first=False).note == expected


def test_dropped_entries_are_counted_not_lost():
    text = n.epilogue_text(None, ENTRIES, 3)
    assert "and 5 more files not listed" in text
    assert "8 files (no room to list them)" in n.epilogue_text(None, ENTRIES, 0)

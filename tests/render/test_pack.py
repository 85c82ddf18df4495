"""The context pack end to end on a synthetic subject: what is sent, what the note claims, the cap."""

from __future__ import annotations

import pytest

from dataset.manifest import Gold, GoldSpan
from experiments.job.config import build
from locator.result import Cost, Evidence, LocalizationResult, Producer, ResultFile, Role
from metrics.context_pack import pack_metrics, sent_lines
from render.notes import NoteKind
from render.pack import render_pack
from render.settings import RenderSettings, RenderVersion

YAML = build("render")
MEASURED, FLAGGED = YAML, YAML.model_copy(update={"version": RenderVersion.FLAGGED})


def _module(spine_lines: int) -> str:
    body = "".join(f"        step_{i} = {i}\n" for i in range(spine_lines))
    return ("import os\n\n\nclass Big:\n    def small(self):\n        return 1\n\n"
            f"    def spine(self):\n{body}        return None\n\n"
            "    def tail(self):\n        return 2\n\n\ndef helper():\n    return 3\n")


SOURCES = {"pkg/big.py": _module(600), "pkg/a/core.py": _module(20), "pkg/b/core.py": _module(20),
           "pkg/util.py": "def u():\n    return 0\n"}
SPINE_START, SPINE_END = 8, 8 + 600 + 1  # `def spine` .. `return None`


def _file(path, *spans, role=Role.PRIMARY):
    return ResultFile(path=path, role=role, evidence=[Evidence(id=f"{path}#{a}-{b}", start_line=a, end_line=b)
                                                      for a, b in spans])


def _result(*files, entities=None):
    return LocalizationResult(task="t", subject=None, producer=Producer(system="test"), files=list(files), cost=Cost(),
                              ranked_entities=entities)


def _both(result, **change):
    return (render_pack(result, SOURCES.get, MEASURED.model_copy(update=change)),
            render_pack(result, SOURCES.get, FLAGGED.model_copy(update=change)))


def _metrics(pack, result):
    return pack_metrics(pack, result, Gold(files=["pkg/util.py"], spans=[], rule="t"), SOURCES.get)


def _sections(pack):
    return pack.text[:len(pack.text) - len(pack.epilogue)]


def test_a_complete_flow_is_called_complete_by_both_rules():
    result = _result(_file("pkg/a/core.py", (4, 6)), _file("pkg/util.py", (1, 2)))
    measured, flagged = _both(result)
    assert measured.note == NoteKind.COMPLETE and "Complete source for 2 files" in measured.epilogue
    assert flagged.note == NoteKind.FLAGGED_COMPLETE
    assert _metrics(measured, result)["false_complete_claims"] == 0.0
    assert sent_lines(measured.text) == {"pkg/a/core.py": {4, 5, 6}, "pkg/util.py": {1, 2}}


def test_a_windowed_range_is_reported_trimmed_where_the_flag_claimed_complete():
    """Seed 002's defect: the oversize window set no flag, so a slice went out as complete."""
    result = _result(_file("pkg/big.py", (SPINE_START, SPINE_END)))
    measured, flagged = _both(result)
    assert _sections(measured) == _sections(flagged)
    assert measured.trimmed_files == ["pkg/big.py"] and measured.note == NoteKind.TRIMMED_NAMED
    assert "`Big.spine`" in measured.epilogue and "treat it as already read" in measured.epilogue
    assert "elided (range windowed): Big.spine" in measured.text
    assert flagged.note == NoteKind.FLAGGED_COMPLETE  # the defective rule, reproduced
    assert _metrics(flagged, result)["false_complete_claims"] == 1.0
    assert _metrics(measured, result)["false_complete_claims"] == 0.0
    assert _metrics(measured, result)["claims_complete"] == 0.0 and _metrics(measured, result)["trimmed_notes"] == 1.0


def test_a_section_cut_at_the_cap_is_trimmed_under_both_rules_and_never_over_the_cap():
    result = _result(_file("pkg/a/core.py", (1, 30)), _file("pkg/big.py", (SPINE_START, SPINE_START + 350)))
    for cap in (700, 1500, 4000):
        measured, flagged = _both(result, cap_tokens=cap, epilogue_floor_tokens=200)
        assert measured.tokens <= cap and flagged.tokens <= cap
        assert _metrics(measured, result)["over_cap"] == 0.0
        assert _sections(measured) == _sections(flagged)
        assert "pkg/big.py" in measured.trimmed_files or any(p.path == "pkg/big.py" for p in measured.pointers)
    measured, flagged = _both(result, cap_tokens=1500, epilogue_floor_tokens=200)
    assert measured.trimmed_files == ["pkg/big.py"] and flagged.note == NoteKind.FLAGGED_TRIMMED
    assert "elided (over the cap): Big.spine" in measured.text


def test_names_offered_are_members_never_containers():
    result = _result(_file("pkg/big.py", (4, SPINE_END)))  # the class head through the spine
    measured, _ = _both(result)
    names = measured.epilogue.split("e.g. ")[1]
    assert "`Big.spine`" in names and "`Big`" not in names


def test_a_path_listed_again_refers_back_and_folds_too_few_new_lines():
    back = _result(_file("pkg/a/core.py", (4, 12)), _file("pkg/a/core.py", (5, 10), role=Role.SUPPORTING))
    measured, _ = _both(back)
    assert "⋯ lines 5-10 shown above" in measured.text and measured.note == NoteKind.COMPLETE
    folded = _result(_file("pkg/a/core.py", (4, 12)), _file("pkg/a/core.py", (10, 13), role=Role.SUPPORTING))
    measured, flagged = _both(folded)  # line 13 is new, too few to fence: folded into the back-reference
    assert measured.trimmed_files == ["pkg/a/core.py"] and measured.note != NoteKind.COMPLETE
    assert "lines 13 elided (too few to fence beside lines shown above)" in measured.text
    assert flagged.note == NoteKind.FLAGGED_TRIMMED  # the fold site did set the flag


def test_member_entities_are_wanted_with_their_definition_ranges():
    result = _result(_file("pkg/a/core.py", (1, 1)), entities=["pkg/a/core.py:Big.tail", "pkg/a/core.py:Big"])
    measured, _ = _both(result)
    tail_start = SOURCES["pkg/a/core.py"].splitlines().index("    def tail(self):") + 1
    assert {tail_start, tail_start + 1} <= sent_lines(measured.text)["pkg/a/core.py"]
    assert 4 not in sent_lines(measured.text)["pkg/a/core.py"]  # the container entity is not wanted whole


def test_a_trimmed_file_label_stays_distinct_from_a_same_named_pointer():
    result = _result(_file("pkg/a/core.py", (1, 30)), _file("pkg/b/core.py", (1, 30)))
    measured, _ = _both(result, cap_tokens=450, epilogue_floor_tokens=250, min_section_lines=5)
    assert [p.path for p in measured.pointers] == ["pkg/b/core.py"]
    assert measured.trimmed_files == ["pkg/a/core.py"]
    assert "`a/core.py`" in measured.epilogue and "`core.py`" not in measured.epilogue


def test_files_without_source_or_spans_become_pointer_entries():
    result = _result(_file("pkg/util.py", (1, 2)), _file("gone.py", (3, 4)), ResultFile(path="pkg/a/core.py"))
    measured, _ = _both(result)
    assert [p.text for p in measured.pointers] == ["- gone.py · primary · not in the subject", "- pkg/a/core.py · relevant"]
    assert measured.pointer_entries == 2 and measured.note == NoteKind.COMPLETE


def test_nothing_shown_and_no_files_claim_nothing():
    nothing = _result(_file("pkg/big.py", (SPINE_START, SPINE_START + 350)))
    measured, _ = _both(nothing, cap_tokens=300, epilogue_floor_tokens=250)
    assert measured.note == NoteKind.NOTHING_SHOWN and not measured.sections and "0 file" not in measured.text
    empty, _ = _both(_result())
    assert empty.note == NoteKind.NO_FILES and _metrics(empty, _result())["claims_complete"] == 0.0


def test_pack_line_recall_counts_gold_lines_the_text_carries():
    result = _result(_file("pkg/util.py", (1, 1)))
    pack, _ = _both(result)
    gold = Gold(files=["pkg/util.py"], spans=[GoldSpan(path="pkg/util.py", start_line=1, end_line=2, region=0)], rule="t")
    assert pack_metrics(pack, result, gold, SOURCES.get)["pack_line_recall"] == 0.5


def test_settings_that_leave_no_room_are_refused():
    with pytest.raises(ValueError, match="cap_tokens"):
        RenderSettings(**{**YAML.model_dump(), "cap_tokens": 100, "epilogue_floor_tokens": 400})
    with pytest.raises(ValueError, match="window_head_lines"):
        RenderSettings(**{**YAML.model_dump(), "max_range_lines": 10})


def test_a_window_keeps_the_smaller_wanted_spans_inside_the_oversize_one():
    result = _result(_file("pkg/big.py", (4, SPINE_END + 5), (450, 455)))  # the whole class, and 6 lines deep inside
    measured, _ = _both(result)
    sent = sent_lines(measured.text)["pkg/big.py"]
    assert set(range(450, 456)) <= sent and 400 not in sent
    assert "elided (range windowed)" in measured.text and measured.trimmed_files == ["pkg/big.py"]


def test_the_epilogue_is_fitted_with_the_sections_above_it_counted():
    # the sections fill their share of a 3,000-token cap; 300 files with nothing shown want pointer
    # entries far beyond the floor: the note and the list must fit into what the sections left
    many = [ResultFile(path=f"pkg/far/module_{i}.py", role=Role.CONTEXT) for i in range(300)]
    result = _result(_file("pkg/big.py", (SPINE_START, SPINE_END)), *many)
    pack = render_pack(result, SOURCES.get, YAML.model_copy(update={"cap_tokens": 3000, "epilogue_floor_tokens": 200}))
    assert pack.tokens <= 3000 and 0 < pack.pointer_entries < 300


def test_each_section_is_fenced_with_its_language_and_its_lines_still_count():
    sources = {"src/arg.rs": "impl Arg {\n    fn f() {}\n}\n", "web/router.ts": "export function r() {}\n",
               "NOTES.txt": "plain\n"}
    result = _result(_file("src/arg.rs", (1, 3)), _file("web/router.ts", (1, 1)), _file("NOTES.txt", (1, 1)))
    pack = render_pack(result, sources.get, MEASURED)
    opening = [line for line in pack.text.split("\n") if line.startswith("```") and line != "```"]
    assert opening == ["```rust", "```typescript"]  # a file of no registered language opens a bare fence
    assert sent_lines(pack.text) == {"src/arg.rs": {1, 2, 3}, "web/router.ts": {1}, "NOTES.txt": {1}}

"""Policy rules of the two-phase family on small hand-made repositories, driven by ScriptedBackend
(a test double of the System One model that answers chosen probabilities). Components are the
YAML's, with each test's overrides (tests/configs.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from locator.discovery import Candidate
from locator.two_phase import RankBy
from locator.reading.state import FileState, Observation
from locator.repository import FileInfo, RepositoryView
from locator.windows import LineRange
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, ReadKind, Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree
from tests.locator.scripted import ScriptedBackend

TASK = Task(id="t", text="the task", subject=SubjectIdentity(repository="r", revision="v"))
READER = dict(window_lines=20, chunk_lines=5, expand_lines=10, action_threshold=0.3, observation_threshold=0.7,
              hotspot_threshold=0.9, soft_rounds=2, hard_rounds=4)
FLAT = dict(file_threshold=0.5, recall_guard_fraction=0.0)


def _lines(n: int, marks: dict[int, str] | None = None, prefix: str = "x") -> str:
    marks = marks or {}
    return "".join(f"{marks[i]} = 1\n" if i in marks else f"{prefix}{i} = {i}\n" for i in range(1, n + 1))


_HOMES = {"chunk_lines": "observation", "primary_threshold": "evidence", "batch_size": "schedule", "epoch_width": "schedule",
          "when_all_wait": "schedule", "soft_rounds": "budget", "hard_rounds": "budget",
          "observation_threshold": "evidence", "max_evidence_spans": "evidence", "window_lines": "sources.windows",
          "expand_lines": "sources.expansions", "max_hotspots": "sources.expansions",
          "hotspot_threshold": "sources.expansions"}


# These rules are tested on loclab's earlier reader (8-line chunk observations, fixed expansions,
# outlined windows: each one named option); the seed's defaults have their own tests below.
EARLIER = ("locator/observation=chunked", "locator/expansion=fixed", "locator.reader.describe=outline")


def _locator(discovery="flat", schedule="batch", discovery_params=None, options=EARLIER, **reader):
    """The YAML's two_phase with the test's settings, each put where it lives in the reader."""
    nested: dict = {}
    for key, value in (READER | reader).items():
        node = nested
        for part in _HOMES.get(key, "").split(".") if key in _HOMES else []:
            node = node.setdefault(part, {})
        node[key] = value
    return compose_locator("two_phase", f"locator/discovery={discovery}", f"locator/schedule={schedule}", *options,
                           discovery=FLAT | (discovery_params or {}) if discovery == "flat" else (discovery_params or {}),
                           reader=nested)


def _run(repo, rules, locator=None, proportional=False, **reader):
    backend = ScriptedBackend(rules, proportional=proportional)
    trace = Trace()
    result = localize(locator or _locator(**reader), TASK, repo, SystemOne(backend, "scripted"), trace)
    return result, backend, trace


def _reads(trace, path):
    return [(e.data["start_line"], e.data["end_line"]) for e in trace.events
            if e.kind == EventKind.READ and e.data["what"] == ReadKind.RANGE and e.data["path"] == path and e.data["lines"] > 0]


def _stage(result, name):
    return next(s for s in result.cost.stages if s.name == name)


def _terminations(result):
    return {f.path: f.termination for f in _stage(result, "reading").files}


def _choice_questions(backend, path):
    return [q for r in backend.requests for q in r.questions.values() if q.type == "choice" and path in (q.content or "")]


@pytest.fixture
def repo(tmp_path):
    return RepositoryView(write_tree(tmp_path, {
        "pkg/a.py": _lines(100, {23: "HOT_ONE", 87: "HOT_TWO"}),
        "pkg/b.py": _lines(100, {45: "LATE_HOT"}),
        "pkg/c.py": _lines(40),
        "docs/notes.py": _lines(10),
    }))


# --- Phase 1 ------------------------------------------------------------------------------------

def test_phase_one_never_reads_a_body(repo):
    for locator in (_locator("flat"), _locator("pruned", discovery_params={"file_threshold": 0.5})):
        result, backend, _ = _run(repo, [("pkg", 0.9)], locator=locator)
        assert _stage(result, "file_discovery").source_lines_read == 0
        discovery_requests = [r for r in backend.requests if r.state["stage"] == "file_discovery"]
        assert all(q.content is None and q.type == "noul" for r in discovery_requests for q in r.questions.values())


def test_flat_threshold_cap_and_recall_guard(repo):
    rules = [("path: pkg/a.py", 0.9), ("path: pkg/b.py", 0.8), ("path: pkg/c.py", 0.3), ("path: docs", 0.2)]
    guarded = _locator(discovery_params=dict(file_threshold=0.85, recall_guard_fraction=0.5, max_files=3))
    details = _stage(_run(repo, rules, locator=guarded)[0], "file_discovery").details
    # above threshold: a; recall guard (top 50 % of 4 files): a, b
    assert (details["files_above_threshold"], details["files_by_recall_guard"], details["files_handed_off"]) == (1, 2, 2)
    capped = _run(repo, rules, locator=_locator(discovery_params=dict(file_threshold=0.1, max_files=1)))[0]
    assert _stage(capped, "file_discovery").details["files_handed_off"] == 1


def test_pruned_exposes_only_direct_files_of_retained_directories(repo):
    rules = [("directory: pkg/", 0.9), ("directory: docs/", 0.1), ("path: pkg/a.py", 0.9), ("path:", 0.7)]
    pruned = _locator("pruned", discovery_params=dict(directory_threshold=0.5, file_threshold=0.6))
    result, backend, _ = _run(repo, rules, locator=pruned)
    details = _stage(result, "file_discovery").details
    assert (details["directories_exposed"], details["directories_retained"], details["files_exposed"]) == (2, 1, 3)
    asked = {q.criteria.split("\n")[0] for r in backend.requests for q in r.questions.values()
             if isinstance(q.criteria, str) and q.criteria.startswith("path:")}
    assert asked == {"path: pkg/a.py", "path: pkg/b.py", "path: pkg/c.py"}


def test_pruned_hands_off_at_most_max_files(repo):
    rules = [("directory: pkg/", 0.9), ("path: pkg/a.py", 0.95), ("path:", 0.8)]
    pruned = _locator("pruned", discovery_params=dict(directory_threshold=0.5, file_threshold=0.6, max_files=2))
    details = _stage(_run(repo, rules, locator=pruned)[0], "file_discovery").details
    assert (details["files_above_threshold"], details["files_handed_off"]) == (3, 2)


# --- Phase 2 ------------------------------------------------------------------------------------

def test_batch_requests_hold_one_choice_question_per_active_file(repo):
    _, backend, _ = _run(repo, [("path: pkg", 0.9), ("lines 1-20", 0.9)], batch_size=2)
    choice_requests = [r for r in backend.requests if any(q.type == "choice" for q in r.questions.values())]
    first_round = choice_requests[:2]
    assert [len(r.questions) for r in first_round] == [2, 1]  # 3 active files, batches of 2
    for request in choice_requests:
        assert all(q.type == "choice" for q in request.questions.values())
        files = [q.content for q in request.questions.values()]
        assert len(files) == len(set(files))


def test_multi_hotspot_expands_around_a_second_hotspot(repo):
    rules = [("path: pkg/a.py", 0.9), ("hotspot", 0.5), ("HOT_ONE", 0.95), ("HOT_TWO", 0.95),
             ("lines 21-40", 0.9), ("lines 81-100", 0.85), ("lines", 0.1)]
    result, _, trace = _run(repo, rules, max_hotspots=2, hard_rounds=6, soft_rounds=6)
    reads = _reads(trace, "pkg/a.py")
    # the two most promising windows first, each finds a hotspot (lines 21-25, 86-90); then the
    # expansions before each hotspot (their after-sides are already read)
    assert reads[:4] == [(21, 40), (81, 100), (11, 20), (76, 80)]
    spans = {(e.start_line, e.end_line) for f in result.files for e in f.evidence}
    assert any(s <= 23 <= e for s, e in spans) and any(s <= 87 <= e for s, e in spans)


def test_a_file_with_new_evidence_earns_a_round_past_the_soft_limit_a_sibling_does_not(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {
        "pkg/late.py": _lines(200, {70: "LATE_HOT"}),
        "pkg/sib.py": _lines(200),
    }))
    # Both files read their windows in order (1-20, 21-40, ...): late.py finds its hotspot in round 4
    # (lines 61-80), at the soft limit, and earns round 5; its sibling found nothing and stops at 4.
    rules = [("path: pkg", 0.9), ("LATE_HOT", 0.95), ("lines", 0.9)]
    result, _, trace = _run(repo, rules, soft_rounds=4, hard_rounds=8, max_actions=1)
    decision = next(e.data for e in trace.events if e.kind == EventKind.DECISION and e.data.get("stage") == "reading")
    assert decision["rounds"] == {"pkg/late.py": 5, "pkg/sib.py": 4}
    assert decision["termination"] == {"pkg/late.py": "no_new_evidence", "pkg/sib.py": "no_new_evidence"}


def test_no_file_exceeds_the_hard_budget(repo):
    result, _, trace = _run(repo, [("path: pkg", 0.9), ("lines", 0.9), ("", 0.8)], soft_rounds=2, hard_rounds=3)
    rounds = next(e.data["rounds"] for e in trace.events if e.kind == EventKind.DECISION and e.data.get("stage") == "reading")
    assert max(rounds.values()) == 3
    assert _stage(result, "reading").details["terminated_budget_exhausted"] >= 1


def test_a_choice_below_the_action_threshold_is_not_read_and_says_so(repo):
    # a.py's best window is chosen at probability 0.4: read at threshold 0.35, not at 0.5
    rules = [("path: pkg/a.py", 0.9), ("lines 1-20", 0.4), ("HOT", 0.95)]
    below, _, trace = _run(repo, rules, action_threshold=0.5)
    assert _reads(trace, "pkg/a.py") == []
    assert _terminations(below) == {"pkg/a.py": "no_action_above_threshold"}
    assert below.files == [] and _stage(below, "reading").details["files_read"] == 0
    above, _, trace = _run(repo, rules, action_threshold=0.35)
    assert _reads(trace, "pkg/a.py")[0] == (1, 20)
    assert _stage(above, "reading").details["files_read"] == 1


def test_a_stop_choice_is_a_model_stop_not_a_threshold_miss(repo):
    rules = [("path: pkg/a.py", 0.9), ("stop:", 0.9), ("lines 1-", 0.5)]
    result, backend, trace = _run(repo, rules)
    assert _terminations(result) == {"pkg/a.py": "model_stop"}
    details = _stage(result, "reading").details
    assert (details["terminated_model_stop"], details["terminated_no_action_above_threshold"]) == (1, 0)
    assert _reads(trace, "pkg/a.py") == [] and len(_choice_questions(backend, "pkg/a.py")) == 1


def test_files_read_counts_files_read_not_files_handed_off(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": _lines(100), "pkg/b.py": _lines(30)}))
    # both are handed off; a.py reads its last window, b.py's windows score below its stop option
    rules = [("path: pkg", 0.9), ("lines 81-100", 0.9), ("stop:", 0.5)]
    result, _, trace = _run(repo, rules, hard_rounds=1, soft_rounds=1)
    details = _stage(result, "reading").details
    assert _terminations(result) == {"pkg/a.py": "budget_exhausted", "pkg/b.py": "model_stop"}
    read_files = {e.data["path"] for e in trace.events if e.kind == EventKind.READ and e.data["what"] == ReadKind.RANGE}
    assert (details["files_handed_off"], details["files_read"], read_files) == (2, 1, {"pkg/a.py"})


def test_per_file_coverage_and_termination_in_the_stage_cost(repo):
    result, _, _ = _run(repo, [("path: pkg/a.py", 0.9), ("lines 1-20", 0.9), ("lines 21-40", 0.8)],
                        soft_rounds=2, hard_rounds=2)
    [file_cost] = _stage(result, "reading").files
    assert (file_cost.path, file_cost.line_count, file_cost.lines_read, file_cost.rounds) == ("pkg/a.py", 100, 40, 2)
    assert file_cost.coverage_pct == 40.0 and file_cost.termination == "budget_exhausted"
    assert _stage(result, "reading").details["coverage_pct_mean"] == 40.0


def test_global_scheduler_reads_the_most_confident_files_first_and_keeps_others_eligible(repo):
    rules = [("path: pkg", 0.9), ("HOT_ONE", 0.95), ("lines 21-40", 0.9), ("lines 41-60", 0.6), ("wait", 0.5),
             ("lines", 0.1)]
    result, backend, trace = _run(repo, rules, locator=_locator(schedule="global", epoch_width=1, hard_rounds=2,
                                                                 soft_rounds=2))
    choice_requests = [r for r in backend.requests if any(q.type == "choice" for q in r.questions.values())]
    assert len(choice_requests[0].questions) == 3  # every eligible file in one request
    first_reads = [e.data["path"] for e in trace.events if e.kind == EventKind.READ and e.data["lines"] > 1]
    assert len(set(first_reads)) > 1  # files not selected in an epoch were read in a later one
    assert _stage(result, "reading").details["epochs"] > 1


def test_global_epoch_width_caps_the_reads_of_an_epoch(repo):
    # System One spreads its file choice (0.3 to its pick, 0.35 to each other file): mass 0.8 needs all three
    rules = [("path: pkg", 0.9), ("next read", 0.3), ("lines 1-20", 0.9)]
    narrow, _, _ = _run(repo, rules, locator=_locator(schedule="global", epoch_width=1, soft_rounds=1, hard_rounds=1))
    wide, _, _ = _run(repo, rules, locator=_locator(schedule="global", epoch_width=3, soft_rounds=1, hard_rounds=1))
    # three files, one round each: one file per epoch, or all three in one epoch
    assert _stage(narrow, "reading").details["epochs"] == 3
    assert _stage(wide, "reading").details["epochs"] == 1
    assert _stage(narrow, "reading").details["files_read"] == _stage(wide, "reading").details["files_read"] == 3


def test_global_lets_system_one_choose_which_files_read_now(repo):
    # every file's best read is confident, but System One's file choice puts 0.9 on b.py: only b.py reads
    rules = [("path: pkg", 0.9), ("file: pkg/b.py", 0.9), ("next read", 0.05), ("lines 1-20", 0.9)]
    locator = _locator(schedule="global", epoch_width=3, soft_rounds=1, hard_rounds=1)
    result, backend, trace = _run(repo, rules, locator=locator)
    epoch_questions = [q for r in backend.requests for q in r.questions.values()
                       if q.type == "choice" and q.instructions.startswith("Which of these files")]
    assert len(epoch_questions[0].criteria) == 3 and all("next read: lines 1-20" in d for d in epoch_questions[0].criteria.values())
    first = next(e.data["path"] for e in trace.events if e.kind == EventKind.READ and e.data["what"] == ReadKind.RANGE)
    assert first == "pkg/b.py"
    details = _stage(result, "reading").details
    # epoch 2: a.py is the (weak, 0.05) choice, c.py holds 0.95 of the mass: both are read
    assert details["epochs"] == 2 and details["epoch_file_choices"] == 2 and details["files_read"] == 3


def test_the_global_hand_off_is_capped():
    assert _locator(schedule="global").discovery.max_files == 64


def test_global_offers_wait_and_a_waiting_file_stays_eligible(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": _lines(100), "pkg/b.py": _lines(10)}))
    # b.py prefers waiting to its one window; a.py reads until its budget ends; then only b waits
    rules = [("path: pkg", 0.9), ("lines 1-10", 0.1), ("wait:", 0.6), ("lines", 0.9)]
    locator = _locator(schedule="global", epoch_width=4, soft_rounds=2, hard_rounds=2, when_all_wait="end")
    result, backend, trace = _run(repo, rules, locator=locator)
    questions = _choice_questions(backend, "pkg/b.py")
    assert all("wait" in q.criteria for q in questions)
    assert len(questions) == 3  # asked in every epoch: waiting does not end a file
    assert _reads(trace, "pkg/b.py") == [] and len(_reads(trace, "pkg/a.py")) == 2
    assert _terminations(result) == {"pkg/a.py": "budget_exhausted", "pkg/b.py": "all_files_waiting"}
    batch = _run(repo, rules, locator=_locator(schedule="batch"))[1]
    assert not any("wait" in q.criteria for q in _choice_questions(batch, "pkg/b.py"))


def test_global_when_every_file_waits_each_takes_its_next_best_option_given_it_does_not_wait(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": _lines(40), "pkg/b.py": _lines(10)}))
    # every file prefers waiting (a model's distribution: wait 0.6 against each window's 0.3 and stop's 0.1)
    rules = [("path: pkg", 0.9), ("stop:", 0.1), ("wait:", 0.6), ("lines 1-", 0.3), ("lines", 0.2)]
    settings = dict(schedule="global", epoch_width=4, soft_rounds=1, hard_rounds=1, action_threshold=0.25)
    ended, _, ended_trace = _run(repo, rules, locator=_locator(**settings, when_all_wait="end"), proportional=True)
    assert _reads(ended_trace, "pkg/a.py") == _reads(ended_trace, "pkg/b.py") == []
    assert set(_terminations(ended).values()) == {"all_files_waiting"}
    assert _stage(ended, "reading").details["all_waiting_epochs"] == 0
    result, backend, trace = _run(repo, rules, locator=_locator(**settings, when_all_wait="next_best"), proportional=True)
    # b.py: 0.3 / (1 - 0.6) = 0.75 for lines 1-10; a.py: 0.3 / (0.1 + 0.3 + 0.2) = 0.5 for lines 1-20
    assert _reads(trace, "pkg/b.py") == [(1, 10)] and _reads(trace, "pkg/a.py") == [(1, 20)]
    assert _terminations(result) == {"pkg/a.py": "budget_exhausted", "pkg/b.py": "budget_exhausted"}
    assert _stage(result, "reading").details["all_waiting_epochs"] == 1
    # asked once, with the wait offered: the next-best read spent the file's one round
    questions = _choice_questions(backend, "pkg/b.py")
    assert len(questions) == 1 and "wait" in questions[0].criteria


def test_global_a_next_best_read_below_the_action_threshold_ends_its_file(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": _lines(40)}))
    rules = [("path: pkg", 0.9), ("stop:", 0.1), ("wait:", 0.6), ("lines 1-", 0.3), ("lines", 0.2)]
    locator = _locator(schedule="global", soft_rounds=1, hard_rounds=1, action_threshold=0.6, when_all_wait="next_best")
    result, _, trace = _run(repo, rules, locator=locator, proportional=True)
    assert _reads(trace, "pkg/a.py") == [] and _terminations(result) == {"pkg/a.py": "no_action_above_threshold"}


def test_global_a_waiting_files_next_best_noul_is_its_own_probability_not_renormalized(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": _lines(40), "pkg/b.py": _lines(10)}))
    rules = [("path: pkg", 0.9), ("stop:", 0.1), ("wait:", 0.6), ("lines 1-", 0.3), ("lines", 0.2)]
    settings = dict(schedule="global", epoch_width=4, soft_rounds=1, hard_rounds=1, decision_form="noul",
                    when_all_wait="next_best")
    # a Noul is about its own option: the next-best read stays at 0.3 (renormalized it would be 0.75 and 0.5)
    strict, _, strict_trace = _run(repo, rules, locator=_locator(**settings, action_threshold=0.5))
    assert _reads(strict_trace, "pkg/a.py") == _reads(strict_trace, "pkg/b.py") == []
    assert set(_terminations(strict).values()) == {"no_action_above_threshold"}
    _, _, trace = _run(repo, rules, locator=_locator(**settings, action_threshold=0.25))
    assert _reads(trace, "pkg/b.py") == [(1, 10)] and _reads(trace, "pkg/a.py") == [(1, 20)]


def test_global_stop_ends_the_file_at_once(repo):
    rules = [("path: pkg/a.py", 0.9), ("path: pkg/b.py", 0.9), ("stop:", 0.95), ("lines", 0.9)]
    locator = _locator(schedule="global", epoch_width=1, soft_rounds=3, hard_rounds=3)
    result, backend, trace = _run(repo, rules, locator=locator)
    # every file's stop beats its windows: each is asked once and ends as a model stop
    assert set(_terminations(result).values()) == {"model_stop"}
    assert len(_choice_questions(backend, "pkg/b.py")) == 1 and _reads(trace, "pkg/b.py") == []


def test_evidence_is_the_chunk_above_the_observation_threshold(repo):
    result, _, _ = _run(repo, [("path: pkg/a.py", 0.9), ("HOT_ONE", 0.95), ("lines 21-40", 0.9)], hard_rounds=1, soft_rounds=1)
    assert result.ranked_paths() == ["pkg/a.py"]
    assert [(e.start_line, e.end_line) for e in result.files[0].evidence] == [(21, 25)]


def test_evidence_keeps_at_most_max_evidence_spans_best_first(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": _lines(40, {3: "HOT_A", 13: "HOT_B", 23: "HOT_C"})}))
    rules = [("path: pkg/a.py", 0.9), ("HOT_A", 0.8), ("HOT_B", 0.95), ("HOT_C", 0.9), ("lines 1-40", 0.9)]
    result, _, _ = _run(repo, rules, window_lines=40, hard_rounds=1, soft_rounds=1, max_evidence_spans=2)
    assert [(e.start_line, e.end_line) for e in result.files[0].evidence] == [(11, 15), (21, 25)]


def test_cost_adds_up_over_stages(repo):
    result, backend, _ = _run(repo, [("path: pkg/a.py", 0.9), ("HOT_ONE", 0.95), ("lines 21-40", 0.9)])
    assert result.cost.model_calls == len(backend.requests) == sum(s.model_calls for s in result.cost.stages)
    assert result.cost.source_lines_read == sum(s.source_lines_read for s in result.cost.stages)


def test_outline_signatures_are_charged_and_traced(tmp_path):
    source = "class A:\n    def f(self):\n        return 1\n\n\ndef g():\n    return 2\n"
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": source}))
    result, _, trace = _run(repo, [("path: pkg/a.py", 0.9), ("stop:", 0.9)])
    outlines = [e.data for e in trace.events if e.kind == EventKind.READ and e.data["what"] == ReadKind.OUTLINE]
    assert outlines == [{"what": "outline", "path": "pkg/a.py", "line_numbers": [1, 2, 6], "lines": 3}]
    assert _stage(result, "reading").source_lines_read == 3 == result.cost.source_lines_read


@pytest.mark.parametrize("bad", [dict(action_threshold=1.5), dict(batch_size=0), dict(soft_rounds=5, hard_rounds=4)])
def test_invalid_reader_parameters_are_refused_naming_the_field(bad):
    with pytest.raises(Exception) as info:
        _locator(**bad)
    assert isinstance(info.value.__cause__ or info.value, ValidationError) or "validation error" in str(info.value)
    assert next(iter(bad)) in str(info.value) or "hard_rounds" in str(info.value)


# --- The seed's reader: the defaults --------------------------------------------------------------

def _seed_locator(keep_unconfirmed_files: bool = False, **reader):
    """The YAML's two_phase as it ships (seed 000's mechanics), with 20-line windows."""
    nested: dict = {}
    for key, value in (dict(window_lines=20, action_threshold=0.3, observation_threshold=0.7, soft_rounds=2,
                            hard_rounds=4) | reader).items():
        node = nested
        for part in _HOMES.get(key, "").split(".") if key in _HOMES else []:
            node = node.setdefault(part, {})
        node[key] = value
    return compose_locator("two_phase", discovery=FLAT, reader=nested, keep_unconfirmed_files=keep_unconfirmed_files)


def test_seed_default_scores_each_read_once_as_a_whole(repo):
    rules = [("path: pkg/a.py", 0.9), ("lines 21-40", 0.9), ("lines", 0.1)]
    result, backend, _ = _run(repo, rules, locator=_seed_locator(hard_rounds=1, soft_rounds=1))
    observed = [q.criteria for r in backend.requests for q in r.questions.values()
                if q.type == "noul" and q.content is not None]
    assert observed == ["pkg/a.py lines 21-40"]  # one observation for the 20-line read, not 8-line chunks


def test_seed_default_expands_any_read_at_the_observation_threshold_by_same_size_neighbours(repo):
    # HOT_ONE's read scores 0.7: exactly the observation threshold, no third (hotspot) threshold
    rules = [("path: pkg/a.py", 0.9), ("HOT_ONE", 0.7), ("before", 0.8), ("after", 0.8), ("lines 21-40", 0.9),
             ("lines", 0.05)]
    _, backend, trace = _run(repo, rules, locator=_seed_locator(hard_rounds=2, soft_rounds=2))
    assert _reads(trace, "pkg/a.py")[:2] == [(21, 40), (1, 20)]  # then the 20-line window before it
    options = [q.options() for r in backend.requests for q in r.questions.values() if q.type == "choice"]
    assert "before0" in options[1] and "after0" in options[1]
    assert "lines 1-20" in options[1]["before0"] and "lines 41-60" in options[1]["after0"]


def test_seed_default_builds_the_action_space_from_stat_alone(tmp_path):
    source = "class A:\n    def f(self):\n        return 1\n" * 10
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": source}))
    result, backend, trace = _run(repo, [("path: pkg/a.py", 0.9), ("lines 1-20", 0.9)], locator=_seed_locator())
    assert not [e for e in trace.events if e.kind == EventKind.READ and e.data["what"] == ReadKind.OUTLINE]
    options = [q.options() for r in backend.requests for q in r.questions.values() if q.type == "choice"]
    assert all("class A" not in d and "def f" not in d for o in options for d in o.values())
    assert "lines 1-20 of 30; 0% of the file read" in options[0]["w0"]


def test_seed_default_evidence_roles(repo):
    # a and b read lines 21-40 (a's hold HOT_ONE, b's score 0.72), the 40-line c reads 1-20 (nothing)
    rules = [("path: pkg/", 0.9), ("HOT_ONE", 0.95), ("x21 = 21", 0.72), ("1-20 of 40;", 0.95), ("lines 21-40", 0.9),
             ("lines", 0.05)]
    one_round = dict(hard_rounds=1, soft_rounds=1, primary_threshold=0.9)
    result, _, _ = _run(repo, rules, locator=_seed_locator(**one_round))
    assert {f.path: (f.role, [(e.start_line, e.end_line) for e in f.evidence]) for f in result.files} == {
        "pkg/a.py": ("primary", [(21, 40)]), "pkg/b.py": ("supporting", [(21, 40)])}
    kept = _run(repo, rules, locator=_seed_locator(keep_unconfirmed_files=True, **one_round))[0]
    assert {f.path: f.role for f in kept.files}["pkg/c.py"] == "context"


def test_seed_default_keeps_every_whole_range_at_the_threshold():
    evidence = compose_locator("two_phase").reader.evidence
    state = FileState(Candidate(FileInfo(path="a.py", size_bytes=1, line_count=1000), 0.9), None)
    state.observations = [Observation(LineRange(s, s + 139), 0.8 + s / 10_000, f"text {s}\n", 1) for s in range(1, 1000, 200)]
    assert len(evidence.evidence(TASK, state)) == 5 and evidence.max_evidence_spans is None
    earlier = compose_locator("two_phase", "locator/observation=chunked").reader.evidence
    assert [(e.start_line, e.end_line) for e in earlier.evidence(TASK, state)] == [(801, 940), (601, 740), (401, 540)]


# --- The stage funnel, retrieval discovery, rank_by ---------------------------------------------

def test_the_result_records_phase_one_ranking_and_hand_off(repo):
    rules = [("path: pkg/a.py", 0.9), ("path: pkg/b.py", 0.8), ("path: pkg/c.py", 0.3), ("path: docs", 0.2)]
    result = _run(repo, rules, locator=_locator(discovery_params=dict(file_threshold=0.5, max_files=3)))[0]
    assert result.handoff.stage == "file_discovery"
    assert result.handoff.ranked == ["pkg/a.py", "pkg/b.py", "pkg/c.py", "docs/notes.py"]
    assert result.handoff.handed_off == ["pkg/a.py", "pkg/b.py"]


def test_retrieval_discovery_hands_off_the_retrievers_top_files_and_charges_its_index(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {
        "pkg/parser.py": _lines(30, {7: "parse_config"}), "pkg/config.py": _lines(30, {3: "config"}),
        "pkg/other.py": _lines(30)}))
    task = Task(id="t", text="parse_config drops the config section", subject=TASK.subject)
    locator = compose_locator("two_phase", "locator/discovery=retrieval", discovery={"max_files": 1},
                              reader={"action_threshold": 0.0})
    result = localize(locator, task, repo, SystemOne(ScriptedBackend([]), "scripted"), Trace())
    assert result.handoff.ranked == ["pkg/parser.py", "pkg/config.py"]  # other.py shares no token: not ranked
    assert result.handoff.handed_off == ["pkg/parser.py"]
    discovery = _stage(result, "file_discovery")
    assert discovery.index_lines == 90 and discovery.source_lines_read == 0 and discovery.model_calls == 0
    assert result.cost.index_lines == 90


@pytest.mark.parametrize("rank_by, expected", [("evidence", ["pkg/b.py", "pkg/a.py"]),
                                                ("discovery", ["pkg/a.py", "pkg/b.py"])])
def test_rank_by_orders_the_files_with_evidence(repo, rank_by, expected):
    # Phase 1 prefers a.py; the reader's evidence in b.py is stronger
    rules = [("path: pkg/a.py", 0.9), ("path: pkg/b.py", 0.8), ("path:", 0.0),
             ("HOT_ONE", 0.75), ("LATE_HOT", 0.95), ("lines", 0.5)]
    locator = _seed_locator(soft_rounds=4, hard_rounds=4).model_copy(update={"rank_by": RankBy(rank_by)})
    assert _run(repo, rules, locator=locator)[0].ranked_paths() == expected


def test_fused_rank_is_reciprocal_rank_fusion_of_both_orders():
    from locator.result import ResultFile
    from locator.two_phase import RankBy, _reorder

    files = [ResultFile(path=p) for p in ("x", "y", "z")]  # evidence order
    # discovery order z, y, x: y is second in both, x and z tie (1/61 + 1/63): by path
    assert [f.path for f in _reorder(files, ["z", "y", "x"], RankBy.FUSED, 60)] == ["x", "z", "y"]
    assert [f.path for f in _reorder(files, ["z", "y", "x"], RankBy.DISCOVERY, 60)] == ["z", "y", "x"]


def test_outline_discovery_shows_the_names_a_file_defines_and_charges_their_signatures(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": "class Parser:\n    def parse(self):\n        pass\n",
                                                "pkg/b.py": "x = 1\n"}))
    outlined = _locator(discovery_params={"describe": "outline", "file_threshold": 0.9})
    result, backend, _ = _run(repo, [("defines: Parser, Parser.parse", 0.95)], locator=outlined)
    assert result.handoff.handed_off == ["pkg/a.py"]
    assert _stage(result, "file_discovery").source_lines_read == 2  # two signature lines: class and method
    plain, backend, _ = _run(repo, [("defines:", 0.95)], locator=_locator(discovery_params={"file_threshold": 0.9}))
    assert plain.handoff.handed_off == [] and _stage(plain, "file_discovery").source_lines_read == 0

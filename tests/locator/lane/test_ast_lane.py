"""locator=ast_lane (seed 001): the search bounds, the owner excerpt's cap and its subtraction from
the task budget, corroboration only inside an owner range, and the v1/v2 contracts."""

from __future__ import annotations

from locator.repository import RepositoryView, SearchKind
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, ReadKind, Trace
from locator.system_one.tokens import count_tokens
from locator.lane.ast_lane import DIAGNOSTIC, OWNER_EXCERPT
from tests.configs import locator as compose_locator
from tests.conftest import write_tree

RENDER_BODY = "".join(f"        total_{i} = size * {i}  # widget layout step {i}\n" for i in range(60))
FILES = {
    "pkg/widget.py": "class Widget:\n    def render(self, size):\n" + RENDER_BODY + "        return size\n",
    "pkg/other.py": "class Panel:\n    def render(self, size):\n        return size\n",
    "pkg/util.py": "def helper(size=1):\n    return size\n",
    "pkg/layout.py": "".join(f"# widget render layout notes {i}\n" for i in range(200)),
}
TRACE = ('Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    Widget.render(widget, size=-1)\n'
         '  File "pkg/widget.py", line 40, in render\n    total = size * 2\nValueError: widget size must be positive')


def _task(text: str = TRACE) -> Task:
    return Task(id="t", text=text, subject=SubjectIdentity(repository="r", revision="v"), metadata={"languages": "python"})


def _lane(version: str, **lane):
    return compose_locator("ast_lane", lane={"version": version, **lane})


def _run(tmp_path, version: str, **lane):
    repo = RepositoryView(write_tree(tmp_path, FILES))
    trace = Trace()
    return localize(_lane(version, **lane), _task(), repo, None, trace), trace


def test_a_search_keeps_at_most_max_hits(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {f"pkg/m{i:02}.py": "def f():\n    pass\n" for i in range(20)}))
    result = repo.search("f", SearchKind.DEFINITION, 16, 10_000)
    assert len(result.hits) == 16 and result.truncated
    assert repo.counters().lines == 16  # each hit's signature line is what was read


def test_a_search_keeps_at_most_max_response_tokens(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {f"pkg/m{i:02}.py": "def f():\n    pass\n" for i in range(20)}))
    result = repo.search("f", SearchKind.DEFINITION, 16, 60)
    assert 0 < len(result.hits) < 16 and result.truncated and result.response_tokens <= 60
    assert result.response_tokens == sum(count_tokens(h.render() + "\n") for h in result.hits)


def test_searches_are_bounded_metered_and_traced(tmp_path):
    result, trace = _run(tmp_path, "v2")
    searches = [e.data for e in trace.events if e.kind == EventKind.READ and e.data["what"] == ReadKind.SEARCH]
    lane = next(s for s in result.cost.stages if s.name == "ast_lane").details
    assert len(searches) == lane["searches"] == lane["ast_terms"] + lane["owner_terms"] + lane["argument_terms"]
    assert all(s["lines"] <= 16 and s["response_tokens"] <= 1024 for s in searches)
    assert len({s["query"] for s in searches}) == len(searches)  # one search per retained term


def test_the_owner_excerpt_is_capped_and_subtracted_from_the_budget(tmp_path):
    result, _ = _run(tmp_path, "v2", source_budget=300, excerpt_tokens=128)
    [excerpt] = [e for f in result.files for e in f.evidence if e.reason == OWNER_EXCERPT]
    assert excerpt.id == "pkg/widget.py#Widget.render" and excerpt.start_line == 2
    assert 0 < count_tokens(excerpt.content) <= 128 and excerpt.end_line < 62  # cut at a line boundary
    sent = sum(count_tokens(e.content) for f in result.files for e in f.evidence)
    assert sent <= 300
    widget = next(f for f in result.files if f.path == "pkg/widget.py")
    assert widget.evidence[0].reason == OWNER_EXCERPT


def test_v2_emits_at_most_two_diagnostic_owner_paths(tmp_path):
    result, _ = _run(tmp_path, "v2", diagnostic_paths=1)
    assert sum(DIAGNOSTIC in (f.reason or "") for f in result.files) == 1


def test_auxiliary_hits_corroborate_only_inside_an_owner_range(tmp_path):
    result, trace = _run(tmp_path, "v2")
    lane = next(s for s in result.cost.stages if s.name == "ast_lane").details
    decision = next(e.data for e in trace.events if e.kind == EventKind.DECISION and e.data.get("stage") == "ast_lane")
    # `size` appears in both render methods' ranges (owners) and in util.helper (no owner): only the
    # former corroborate, and the corroborated, qualified owner ranks first
    assert lane["corroborations"] > 0
    assert decision["owner_paths"][0] == "pkg/widget.py"
    assert "pkg/util.py" not in decision["owner_paths"]


def test_v1_adds_soft_focus_paths_without_source(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, FILES))
    # the base keeps one file, so owner paths outside it become focus paths
    lane = compose_locator("ast_lane", base={"top_files": 1}, lane={"version": "v1", "focus_paths": 1})
    result = localize(lane, _task(), repo, None, Trace())
    focus = [f for f in result.files if f.reason == "soft focus path"]
    assert len(focus) == 1 and not focus[0].evidence and focus[0].path not in {result.files[0].path}
    assert not [e for f in result.files for e in f.evidence if e.reason == OWNER_EXCERPT]


def test_the_lane_off_is_the_base_under_the_budget(tmp_path):
    off, _ = _run(tmp_path, "off", source_budget=200)
    assert sum(count_tokens(e.content) for f in off.files for e in f.evidence) <= 200
    assert next(s for s in off.cost.stages if s.name == "ast_lane").details["searches"] == 0


def test_corroboration_counts_only_hits_inside_an_owner_range(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {
        "pkg/a.py": "class Owner:\n    def run(self, size):\n        return size\n\nsize = 1\nsize = 2\n"}))
    trace = Trace()
    result = localize(_lane("v2"), _task("    Owner.run(o, size=1)\nValueError: bad size"), repo, None, trace)
    lane = next(s for s in result.cost.stages if s.name == "ast_lane").details
    # `size` is on lines 2, 3, 5, 6; only 2 and 3 fall in Owner.run (2-3), found by two terms (run,
    # Owner.run): 2 hits x 2 owner entries; lines 5 and 6 corroborate nothing
    assert (lane["owners"], lane["corroborations"]) == (2, 4)


def test_the_owner_excerpt_is_reserved_from_the_same_budget(tmp_path):
    wide, _ = _run(tmp_path / "wide", "v2", source_budget=100_000)
    excerpt = sum(count_tokens(e.content) for f in wide.files for e in f.evidence if e.reason == OWNER_EXCERPT)
    cheapest = min(count_tokens(e.content) for f in wide.files for e in f.evidence if e.reason != OWNER_EXCERPT)
    budget = excerpt + cheapest - 1  # the cheapest base excerpt fits the budget, but not beside the excerpt
    tight, _ = _run(tmp_path / "tight", "v2", source_budget=budget)
    assert sum(count_tokens(e.content) for f in tight.files for e in f.evidence) == excerpt


def _owner(path: str, term: str, *, exact: bool = True, qualified: bool = False, line: int = 1):
    from locator.lane.ast_lane import Owner
    from locator.repository import SearchHit

    return Owner(SearchHit(path, line, line + 1, term, f"def {term}():"), term, qualified, exact)


def test_v2_ranks_a_declared_source_language_first():
    """Seed 001's mixed subject (Rust crates beside a TypeScript client): owners equal but for their
    language rank by the task's declared language, whichever it is."""
    from collections import Counter

    from locator.lane.ast_lane import AstLaneLocator

    owners = [_owner("web/src/router.ts", "route"), _owner("crates/agent/src/router.rs", "route")]
    assert AstLaneLocator._rank(owners, Counter(), ("rust",)) == ["crates/agent/src/router.rs", "web/src/router.ts"]
    assert AstLaneLocator._rank(owners, Counter(), ("typescript",)) == ["web/src/router.ts", "crates/agent/src/router.rs"]


def test_v2_skips_inexact_owners():
    from collections import Counter

    from locator.lane.ast_lane import AstLaneLocator

    owners = [_owner("pkg/a.py", "render", exact=False), _owner("pkg/b.py", "render", exact=False),
              _owner("pkg/c.py", "Widget.render", exact=True, qualified=True)]
    assert AstLaneLocator._rank(owners, Counter(), ("python",)) == ["pkg/c.py"]

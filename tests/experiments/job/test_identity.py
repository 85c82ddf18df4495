"""A result, and every cached decision, is bound to everything that produced it: the source of every
loclab module on its path, the distributions those modules import (version and installed source),
the model files they load, and the System One backend's own code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from experiments.job import identity
from experiments.job.config import build, compose_config
from experiments.job.identity import BoundBackend, dependencies, module_closure
from experiments.job.paths import PROJECT_ROOT
from experiments.job.production import job_code
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.trace import Trace
from locator.system_one.snapshot import SnapshotBackend, read_snapshot
from tests.configs import backend
from tests.conftest import write_tree
from tests.experiments.cli import Workspace
from tests.locator.configured import TASK, TREE, configured_locators, system_one_for, unaudited


def _loaded_loclab_modules() -> set[str]:
    return {name for name, module in list(sys.modules.items())
            if name.split(".")[0] in ("locator", "dataset", "metrics", "render", "experiments")
            and getattr(module, "__file__", None) and str(PROJECT_ROOT) in module.__file__}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork: each locator runs in a child of one warm process")
@pytest.mark.long
def test_every_module_a_locator_loads_is_in_its_results_identity(tmp_path):
    """Each configured locator runs in a fork of a process that has imported only the production
    path; every loclab module it then loads must be in the code identity of its config."""
    root = write_tree(tmp_path / "subject", TREE)
    import experiments.job.production  # noqa: F401  the baseline every job has
    # System One's own code is bound by its identity (the tests below). A forked child must not run
    # torch (its thread pool does not survive fork), nor may this process import the locator before
    # forking: a locator that generates asks the local model in a subprocess, and its child replays
    # those generations from their snapshot.
    recorded = {name: _recorded_generations(name, overrides, root, tmp_path)
                for name, overrides in configured_locators(tmp_path) if system_one_for(name)[0] != "lexical"}
    lexical = backend("lexical")

    checked = []
    for name, overrides in configured_locators(tmp_path):
        cfg = compose_config(*overrides)
        before = _loaded_loclab_modules()
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # the child localizes and reports what it loaded beyond the baseline
            os.close(read)
            try:
                configured = build("locator", *overrides)
                answers = recorded.get(name) or lexical
                localize(configured, TASK, RepositoryView(root), SystemOne(answers, "m"), Trace())
                report = {"loaded": sorted(_loaded_loclab_modules() - before)}
            except BaseException as exc:  # noqa: BLE001 - reported to the parent, never raised in a fork
                report = {"error": f"{type(exc).__name__}: {exc}"}
            os.write(write, json.dumps(report).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            report = json.loads(pipe.read())
        os.waitpid(child, 0)
        assert "error" not in report, f"{name}: {report.get('error')}"
        uses_system_one = getattr(build("locator", *overrides), "uses_system_one", True)
        outside = set(report["loaded"]) - set(job_code(cfg, uses_system_one).modules) - {"tests.configs"}
        assert not outside, f"{name} ran loclab code its results' address does not cover: {sorted(outside)}"
        checked.append(name)
    assert not unaudited(checked)


_RECORD = """
import sys
from experiments.job.config import build
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.system_one.snapshot import decisions_from_trace, write_snapshot
from locator.trace import Trace
from tests.configs import backend
from tests.locator.configured import TASK
live = backend(sys.argv[1])
trace = Trace()
localize(build("locator", *sys.argv[4:]), TASK, RepositoryView(sys.argv[2]), SystemOne(live, "m"), trace)
open(sys.argv[3], "w").write(live.identity + "\\n" + write_snapshot(decisions_from_trace(trace.events, live.identity, "t")))
"""


def _recorded_generations(name: str, overrides: list[str], root, tmp_path) -> SnapshotBackend:
    out = tmp_path / f"{name.replace(' ', '_')}.snapshot"
    subprocess.run([sys.executable, "-c", _RECORD, system_one_for(name)[0], str(root), str(out), *overrides],
                   cwd=PROJECT_ROOT, check=True)
    identity, _, rows = out.read_text().partition("\n")
    snapshot = tmp_path / "decisions.jsonl"
    snapshot.write_text(rows)
    return SnapshotBackend(read_snapshot(snapshot), identity)


def test_the_closure_follows_every_import_and_stays_off_scoring():
    modules, others = module_closure(("experiments.job.production",))
    assert {"dataset.subjects", "locator.repository", "locator.base", "locator.runtime", "experiments.job.identity",
            "locator.system_one.client"} <= set(modules)
    assert not [m for m in modules if m.startswith(("metrics", "render", "experiments.job.pipeline", "experiments.run"))]
    assert "blake3" in others and "os" not in others  # the standard library is the interpreter's
    two_phase = job_code(compose_config("locator=two_phase"), True)
    assert {"locator.two_phase", "locator.reading.engine", "locator.system_one.lexical"} <= set(two_phase.modules)
    bm25 = job_code(compose_config("locator=bm25"), False)
    assert {"experiments.job.production", "dataset.subjects", "locator.runtime"} <= set(bm25.modules)  # the path, whole
    assert "locator.system_one.lexical" not in bm25.modules  # bm25 asks no System One
    assert "pystemmer" in {d.name for d in bm25.dependencies} and "tree-sitter-python" in {d.name for d in bm25.dependencies}
    assert "loclab" in {d.name for d in bm25.dependencies}


def _fake_distribution(site, version: str, body: str) -> None:
    package = site / "fakemod"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(body)
    info = site / "fakedist-1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakedist\nVersion: {version}\n")
    (info / "RECORD").write_text("fakemod/__init__.py,,\nfakedist-1.dist-info/METADATA,,\n")
    (info / "top_level.txt").write_text("fakemod\n")


def _fake_dependency(site):
    identity._distributions_by_import.cache_clear()
    identity._dependency.cache_clear()
    return next(d for d in dependencies(["fakemod"]) if d.name == "fakedist")


def test_a_dependency_is_bound_by_its_version_and_its_installed_source(tmp_path, monkeypatch):
    site = tmp_path / "site"
    _fake_distribution(site, "1.0", "def score(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(site))
    try:
        first = _fake_dependency(site)
        assert first.version == "1.0"
        (site / "fakemod" / "__init__.py").write_text("def score(x):\n    return 3 * x\n")  # edited in place
        edited = _fake_dependency(site)
        assert edited.version == "1.0" and edited.installed_blake3 != first.installed_blake3
        _fake_distribution(site, "2.0", "def score(x):\n    return 3 * x\n")
        assert _fake_dependency(site).version == "2.0"
    finally:
        identity._distributions_by_import.cache_clear()
        identity._dependency.cache_clear()


def test_a_compiled_file_is_bound_by_its_content_and_its_digest_is_paid_once(tmp_path, monkeypatch):
    """PyStemmer's extension with two language names swapped keeps its name and size: its content
    binds it. The digest is kept by path, size, mtime, ctime and inode, so an unchanged install is not read
    again, and a file edited or replaced is."""
    site = tmp_path / "site"
    _fake_distribution(site, "1.0", "def score(x):\n    return x\n")
    extension = site / "fakemod" / "_stem.so"
    extension.write_bytes(b"english\0russian\0" * 64)
    record = site / "fakedist-1.dist-info" / "RECORD"
    record.write_text(record.read_text() + "fakemod/_stem.so,,\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("LOCLAB_CACHE_DIR", str(tmp_path / "cache"))
    identity.file_digests.cache_clear()
    try:
        first = _fake_dependency(site)
        assert identity.file_digests().read_bytes >= extension.stat().st_size  # cold: the extension hashed
        identity.file_digests.cache_clear()
        assert _fake_dependency(site).installed_blake3 == first.installed_blake3
        assert identity.file_digests().read_bytes == 0  # warm, in a new process's digests: nothing read
        stat = extension.stat()
        extension.write_bytes(b"russian\0english\0" * 64)  # same name, size, inode; its mtime set back
        os.utime(extension, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        identity.file_digests.cache_clear()
        swapped = _fake_dependency(site)
        assert swapped.installed_blake3 != first.installed_blake3
        staged = extension.with_name("staged.so")  # replaced by another file (a reinstall): a new inode
        staged.write_bytes(b"english\0russian\0" * 64)
        os.utime(staged, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        os.replace(staged, extension)
        identity.file_digests.cache_clear()
        assert _fake_dependency(site).installed_blake3 == first.installed_blake3
    finally:
        identity._distributions_by_import.cache_clear()
        identity._dependency.cache_clear()
        identity.file_digests.cache_clear()


def test_a_changed_dependency_changes_the_results_address(tmp_path, monkeypatch):
    from dataset.manifest import load_manifest
    from experiments.job.pipeline import Job
    from tests.experiments.cli import tampered_manifest

    manifest = load_manifest(tampered_manifest(tmp_path, tamper=set()))

    def address():
        identity.code_identity.cache_clear()
        return Job(compose_config("locator=bm25"), manifest, "bm25").run_key

    before = address()
    real = identity._dependency.__wrapped__

    def upgraded(name):
        found = real(name)
        return found.model_copy(update={"version": "99.0"}) if found is not None and found.name == "pystemmer" else found

    monkeypatch.setattr(identity, "_dependency", upgraded)
    try:
        assert address() != before
    finally:
        monkeypatch.undo()
        identity.code_identity.cache_clear()


def test_a_backend_s_identity_names_its_code_and_its_weights(tmp_path, monkeypatch):
    lexical = BoundBackend(backend("lexical"))
    assert lexical.identity.startswith(backend("lexical").identity + "|code=")
    # the backend's own source is in it: a copy with a harsher relevance rule answers under another identity
    module = tmp_path / "harsher_lexical.py"
    source = (PROJECT_ROOT / "locator" / "system_one" / "lexical.py").read_text()
    assert identity.backend_code("locator.system_one.lexical") != identity.backend_code("locator.system_one.embedding")
    monkeypatch.setattr(identity, "_project_file", lambda name, real=identity._project_file:
                        module if name == "locator.system_one.lexical" else real(name))
    identity._imports.cache_clear()
    identity.code_identity.cache_clear()
    try:
        module.write_text(source)
        same = identity.backend_code("locator.system_one.lexical")
        identity._imports.cache_clear()
        identity.code_identity.cache_clear()
        module.write_text(source.replace("return matched / (matched + self.scale * norm)",
                                         "return matched / (matched + 3 * self.scale * norm)"))
        assert identity.backend_code("locator.system_one.lexical") != same
    finally:
        monkeypatch.undo()
        identity._imports.cache_clear()
        identity.code_identity.cache_clear()


def test_model_weights_are_bound_by_their_content(tmp_path, monkeypatch):
    weights = tmp_path / "model.bin"
    weights.write_bytes(b"\0" * 1024)
    loader = tmp_path / "weighted.py"
    loader.write_text(textwrap.dedent(f"""
        def weight_files():
            return [{str(weights)!r}]
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(identity, "_project_file", lambda name, real=identity._project_file:
                        loader if name == "weighted" else real(name))
    first = identity.weights(["weighted"])
    weights.write_bytes(b"\1" * 1024)  # same size, other content
    identity._file_digest.cache_clear()
    assert [w.file for w in first] == [w.file for w in identity.weights(["weighted"])]
    assert first[0].blake3 != identity.weights(["weighted"])[0].blake3


def test_changed_code_on_the_path_never_reuses_results_or_decisions(tmp_path, subject_cache):
    """A copy of loclab runs two_phase and bm25; then (1) the lexical backend's relevance rule gets
    three times harsher: two_phase re-localizes and the decision cache answers nothing from the old
    backend, bm25 (no System One) reuses its results; (2) the view skips files over 20 KB in
    experiments/job/isolation.py: both re-localize; (3) the job hands the worker the task's text cut to 60
    characters (the caller outside the address, found in the last audit): both re-localize under a new
    address, and the clean code does not reuse what the modified code made; reverted, both reuse the
    first results again."""
    copy = tmp_path / "loclab"
    for part in ("locator", "experiments", "dataset", "metrics", "render", "conf", "datasets"):
        shutil.copytree(PROJECT_ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    ws = Workspace(tmp_path / "ws", subject_cache, project=copy)

    def jobs() -> dict[str, dict]:
        for locator in ("two_phase", "bm25"):
            result = ws.run("experiments.run", f"locator={locator}", "limit=2")
            assert result.returncode == 0, result.stderr[-2000:]
        latest = {}
        for run in sorted(ws.jobs(), key=lambda r: r.info.start_time):
            latest[run.data.tags["loclab.locator"]] = run.data.metrics | {"run_key": run.data.tags["loclab.run_key"]}
        return latest

    first = jobs()
    lexical = copy / "locator" / "system_one" / "lexical.py"
    original = lexical.read_text()
    lexical.write_text(original.replace("return matched / (matched + self.scale * norm)",
                                        "return matched / (matched + 3 * self.scale * norm)"))
    harsher = jobs()
    assert harsher["two_phase"]["6 tasks/reused"] == 0 and harsher["two_phase"]["2 cost/cache_hits"] == 0
    assert harsher["bm25"]["6 tasks/reused"] == 2
    lexical.write_text(original)
    isolation = copy / "experiments" / "job" / "isolation.py"
    kept_view = isolation.read_text()
    isolation.write_text(kept_view.replace("return RepositoryView(root, frozen=frozen, listing_dir=listing_dir)",
                                           "return RepositoryView(root, frozen=frozen, listing_dir=listing_dir, "
                                           "max_file_bytes=20_000)"))
    smaller = jobs()
    assert smaller["two_phase"]["6 tasks/reused"] == 0 and smaller["bm25"]["6 tasks/reused"] == 0
    isolation.write_text(kept_view)
    production = copy / "experiments" / "job" / "production.py"
    kept = production.read_text()
    handoff = "self.start_worker().localize(row.task.model_dump_json(),"
    assert kept.count(handoff) == 1
    production.write_text(kept.replace(handoff, "self.start_worker().localize(row.task.model_copy("
                                                "update={'text': row.task.text[:60]}).model_dump_json(),"))
    cut = jobs()
    assert cut["bm25"]["6 tasks/reused"] == 0 and cut["bm25"]["run_key"] != first["bm25"]["run_key"]
    assert cut["two_phase"]["6 tasks/reused"] == 0
    production.write_text(kept)
    again = jobs()
    assert again["bm25"]["6 tasks/reused"] == 2 and again["bm25"]["run_key"] == first["bm25"]["run_key"]
    assert again["two_phase"]["6 tasks/reused"] == 2 and again["two_phase"]["run_key"] == first["two_phase"]["run_key"]


_JOB_PATH = """
import json, sys
from experiments.job.config import compose_config
from experiments.job.paths import PROJECT_ROOT

def loaded_loclab_modules():
    return {n for n, m in list(sys.modules.items()) if n.split(".")[0] in ("locator", "dataset", "metrics", "render",
            "experiments", "tests") and (getattr(m, "__file__", None) or "").startswith(str(PROJECT_ROOT) + "/")}

cfg = compose_config(*sys.argv[2:], f"paths.results_dir={sys.argv[1]}/results", f"paths.cache_dir={sys.argv[1]}/cache")
before = loaded_loclab_modules()  # composing the config is Hydra's part, before any row is read
from hydra.utils import instantiate
from experiments.job.production import Producer
manifest = instantiate(cfg.dataset.loader)
producer = Producer(cfg, manifest, "job")
produced = producer.produce(manifest.rows[0].task.id, 0, localize_missing=True)
producer.close()
print(json.dumps({"ran": sorted(loaded_loclab_modules() - before), "address": producer.code.modules,
                  "run_key": producer.run_key}))
"""


@pytest.mark.parametrize("locator", ["bm25", "two_phase"])
def test_every_module_between_reading_a_row_and_saving_its_result_is_in_the_address(tmp_path, locator):
    """The real job path in a fresh process: the data set's loader reads the rows, the producer
    materializes the subject and has the worker localize (whose own modules it checks per task, see
    test_isolation), saves the result. Every loclab module that ran is in the results' address."""
    proc = subprocess.run([sys.executable, "-c", _JOB_PATH, str(tmp_path), f"locator={locator}"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert {"dataset.manifest", "experiments.job.production", "experiments.job.isolation"} <= set(report["ran"])
    assert not set(report["ran"]) - set(report["address"]), \
        f"ran loclab code the address does not bind: {sorted(set(report['ran']) - set(report['address']))}"


def test_a_change_to_any_module_on_the_path_gives_a_new_address_and_reverting_it_the_old(monkeypatch):
    """Each module of a job's address (data set loading, production, the worker and its audit, the
    locator, System One): its source changed gives a new address; restored, the first again."""
    cfg = compose_config("locator=two_phase", "dataset=swebench_lite_pypi")
    first = job_code(cfg, True)
    must = {"dataset.manifest", "dataset.swebench", "dataset.subjects", "experiments.job.production", "experiments.job.isolation",
            "experiments.job.audit", "locator.runtime", "locator.base", "locator.two_phase", "locator.system_one.lexical"}
    assert must <= set(first.modules)
    read_bytes = identity._project_file("locator.runtime").__class__.read_bytes
    for module in first.modules:
        path = identity._project_file(module)
        monkeypatch.setattr(type(path), "read_bytes",
                            lambda self, _p=path: read_bytes(self) + (b"\nCHANGED = 1\n" if self == _p else b""))
        identity.code_identity.cache_clear()
        assert job_code(cfg, True).digest != first.digest, f"a change to {module} kept the address"
        monkeypatch.undo()
    identity.code_identity.cache_clear()
    assert job_code(cfg, True).digest == first.digest

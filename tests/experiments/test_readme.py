"""Every command of the README, run as written through the real CLI, on a narrowed task selection:
two tasks of two repositories on the demo set, one already-downloaded instance on the SWE-bench subset, and the
analysis commands' placeholders (RUN_A, PARENT_RUN, LEFT.json, …) replaced by real runs."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from experiments.job.paths import CONF_DIR, PROJECT_ROOT
from experiments.job.system_one_process import system_one_server
from tests.experiments.cli import Workspace
from tests.dataset.test_multi_swe_bench import multi_swe_bench_rows
from tests.experiments.test_languages import LOCATORS as LANGUAGE_SWEEP_LOCATORS
from tests.experiments.test_presets import PRESETS
from tests.experiments.test_run import LAUNCHED_LOCATORS, LAUNCHERS
from tests.test_configs import readme_commands

pytestmark = pytest.mark.network

# one dev and one test instance, both downloaded by the other end-to-end tests of the session
SWEBENCH_TASKS = "tasks=[marshmallow-code__marshmallow-1343,psf__requests-2317]"
TRACE_TASKS = "tasks=[marshmallow-code__marshmallow-1343]"  # the trace set holds only instances with a trace
MULTI_SWE_BENCH_ROWS = ""  # set by the test: rows over a local mirror


def _narrowed(argv: list[str]) -> list[str]:
    """The command with its task selection narrowed (nothing else changed)."""
    rest = [a for a in argv if not a.startswith(("limit=", "tasks="))]
    joined = " ".join(argv)
    if "multi_swe_bench" in joined:
        return rest + [f"dataset.loader.path={MULTI_SWE_BENCH_ROWS}"]
    if "swebench_lite_pypi_traces" in joined:
        return rest + [TRACE_TASKS]
    if "swebench" in joined:
        return rest + [SWEBENCH_TASKS]
    if "tasks=" in joined:
        return argv
    named = dict(a.split("=", 1) for a in rest if "=" in a)
    on_demo = named.get("dataset", "demo") == "demo" and _preset_dataset(named.get("experiment", "default")) == "demo"
    return rest + [DEMO_TASKS if on_demo else "limit=2"]


# two repositories' tasks, one of them the README's single-task example: the runs share a task
DEMO_TASKS = "tasks=[demo-itsdangerous-001,demo-click-001]"


def _preset_dataset(preset: str) -> str:
    """The data set a preset runs on (test_presets.py runs each on the demo set)."""
    defaults = yaml.safe_load((CONF_DIR / "experiment" / f"{preset}.yaml").read_text(encoding="utf-8")).get("defaults", [])
    return next((d["override /dataset"] for d in defaults if isinstance(d, dict) and "override /dataset" in d), "demo")


def run_elsewhere(argv: list[str]) -> str | None:
    """The test that runs this README command as written (its task selection narrowed, as here), so
    the suite runs it once: a preset on its own (every preset runs on a demo task), a launcher over
    the two locators the launcher test sweeps, a language's demo set over locators its sweep holds."""
    if argv[0] != "experiments.run" or "-m" not in argv:
        return None
    args = sorted(a for a in argv[1:] if a != "-m")
    named = dict(a.split("=", 1) for a in args if "=" in a)
    if len(args) == 1 and named.get("experiment") in PRESETS and _preset_dataset(named["experiment"]) == "demo":
        return "tests/experiments/test_presets.py::test_every_preset_runs_on_one_demo_task"
    if len(args) == 2 and named.get("sweep") in LAUNCHERS and sorted(named.get("locator", "").split(",")) == sorted(
            LAUNCHED_LOCATORS):
        return "tests/experiments/test_run.py::test_a_parallel_sweep_shares_one_store_created_by_the_parent"
    if (len(args) == 2 and str(named.get("dataset")).startswith("demo_")
            and set(named.get("locator", "").split(",")) <= set(LANGUAGE_SWEEP_LOCATORS)):
        return "tests/experiments/test_languages.py::test_every_locator_runs_on_each_languages_demo_set_in_one_logged_sweep"
    return None


def _run(ws: Workspace, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    multirun = "-m" in argv
    args = [a for a in argv[1:] if a != "-m"]
    dirs = [f"hydra.sweep.dir={ws.root}/hydra-multi"] if multirun else [f"hydra.run.dir={ws.root}/hydra"]
    cmd = [sys.executable, "-m", argv[0], *(["-m"] if multirun else []), *args, *dirs]
    return subprocess.run(cmd, cwd=PROJECT_ROOT, env=ws.env() | (env or {}), capture_output=True, text=True, timeout=900)


@pytest.mark.long
def test_every_readme_command_runs(tmp_path, subject_cache, swebench_file, monkeypatch):
    ws = Workspace(tmp_path / "ws", subject_cache)
    # the Multi-SWE-bench command: its rows' repository from a real local git mirror, as a user's
    rows, mirrors = multi_swe_bench_rows(tmp_path / "mswe")
    monkeypatch.setattr(sys.modules[__name__], "MULTI_SWE_BENCH_ROWS", str(rows))
    monkeypatch.setenv("LOCLAB_GIT_MIRRORS", str(mirrors))
    commands = readme_commands(r"experiments(\.\w+)+")
    # system_one=http needs a server (below); the local model's sweep is run by tests/experiments/job/test_review.py
    # a command the README gives twice (its quick start and its reference) is run once
    # and one another test runs as written is run there (run_elsewhere)
    jobs = list(dict.fromkeys(tuple(c) for c in commands
                              if c[0] in ("experiments.run", "experiments.score", "experiments.render")
                              and "system_one=http" not in c and "system_one=local_llm" not in c
                              and run_elsewhere(c) is None))
    for argv in jobs:
        proc = _run(ws, _narrowed(argv), env={"LOCLAB_SWEBENCH_LITE": str(swebench_file)})
        assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stderr[-3000:]}"
    assert _run(ws, ["experiments.run", "locator=bm25", DEMO_TASKS, "repeats=2"]).returncode == 0

    # the team set-up: loclab's server, then a parallel sweep over HTTP
    [serve] = [c for c in commands if c[0] == "experiments.serve_system_one"]
    [http_sweep] = [c for c in commands if "system_one=http" in c]
    with system_one_server(tmp_path / "server-cache", *[a for a in serve[1:] if not a.startswith("server.port=")]) as url:
        proc = _run(ws, _narrowed(http_sweep), env={"LOCLAB_SYSTEM_ONE_URL": url})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "HTTP Request:" not in proc.stdout + proc.stderr  # httpx's line per request stays off the console

    demo_jobs = sorted(ws.jobs(), key=lambda r: r.info.start_time)
    [repeated] = [j for j in demo_jobs if j.data.params.get("repeats") == "2"]
    [calibration_sweep] = [s for s in ws.runs("loclab-swebench_lite_pypi", "tags.`loclab.kind` = 'sweep'")
                           if len(ws.runs("loclab-swebench_lite_pypi", f"tags.`mlflow.parentRunId` = '{s.info.run_id}'")) == 9]
    results = sorted((ws.root / "results").rglob("demo-click-001/r0/localization-result.json"))
    subs = {"RUN_A": demo_jobs[0].info.run_id, "RUN_B": demo_jobs[1].info.run_id, "RUN": repeated.info.run_id,
            "PARENT_RUN": calibration_sweep.info.run_id, "LEFT.json": str(results[0]), "RIGHT.json": str(results[-1])}
    analysis = [c for c in commands if c[0] in ("experiments.analysis.compare", "experiments.analysis.repeatability", "experiments.analysis.calibrate",
                                                 "experiments.analysis.pareto", "experiments.analysis.compare_results", "experiments.analysis.replay",
                                                 "experiments.analysis.replay_render")]
    assert len(analysis) == 11
    searched = 0
    for argv in analysis:
        args = [subs.get(a, a) for a in argv[1:] if not a.startswith("[") and a not in ("…]",)]
        if "--search" in args:  # narrowed as a job's tasks are: 2 trials, then the same search goes on to 3
            searched += 1
            args = [a for i, a in enumerate(args) if a != "--trials" and (i == 0 or args[i - 1] != "--trials")]
            args += ["--trials", str(1 + searched)]
        if argv[0] in ("experiments.analysis.replay", "experiments.analysis.replay_render"):
            args += ["--db", str(ws.db)]
        elif "--search" in args:
            args += ["--db", str(ws.db)]
        elif argv[0] != "experiments.analysis.compare_results":
            args += ["--db", str(ws.db), "--out", str(ws.root / "report" / argv[0])]
        proc = subprocess.run([sys.executable, "-m", argv[0], *args], cwd=PROJECT_ROOT, env=ws.env(),
                              capture_output=True, text=True, timeout=300)
        changed = argv[0] == "experiments.analysis.replay" and any("=" in a for a in args)  # differences exit 1 by design
        assert proc.returncode in ((0, 1) if changed else (0,)), \
            f"{' '.join(argv)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        if argv[0] == "experiments.analysis.replay":
            assert "tasks byte-identical to the recorded results" in proc.stdout

    [compile_cmd] = [c for c in commands if c[0] == "experiments.manifest"]
    target = tmp_path / "manifest.jsonl"
    proc = subprocess.run([sys.executable, "-m", *compile_cmd[:-1], str(target)], cwd=PROJECT_ROOT, env=ws.env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert target.read_bytes() == (PROJECT_ROOT / compile_cmd[-1]).read_bytes()  # the committed manifest is current


def test_a_readme_command_run_elsewhere_is_run_there_as_written():
    """The README commands this test leaves to another: each names a test that exists, and a command
    with anything more (an override, another data set) stays here."""
    import importlib

    delegated = {" ".join(c): run_elsewhere(c) for c in readme_commands(r"experiments(\.\w+)+") if run_elsewhere(c)}
    assert delegated, "no README command is left to another test: the delegation rules match nothing"
    for command, test in delegated.items():
        module, function = test.split("::")
        assert hasattr(importlib.import_module(module.removesuffix(".py").replace("/", ".")), function), command
    assert run_elsewhere(["experiments.run", "-m", "experiment=ast_lane_ab"]) is None  # its own data set (demo_traces)
    assert run_elsewhere(["experiments.run", "-m", "experiment=algorithms_ab", "limit=3"]) is None
    assert run_elsewhere(["experiments.run", "-m", "sweep=parallel", "locator=two_phase,hybrid"]) is None
    assert run_elsewhere(["experiments.run", "-m", "dataset=demo_rust", "locator=bm25,imported"]) is None

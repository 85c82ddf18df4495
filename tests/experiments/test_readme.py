"""Every command of the README, run as written through the real CLI, on a narrowed task selection:
`limit=1` on the demo set, one already-downloaded instance on the SWE-bench subset, and the
analysis commands' placeholders (RUN_A, PARENT_RUN, LEFT.json, …) replaced by real runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from experiments.paths import PROJECT_ROOT
from experiments.system_one_process import system_one_server
from tests.experiments.cli import Workspace
from tests.dataset.test_multi_swe_bench import multi_swe_bench_rows
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
    return rest + ["limit=4"]  # includes demo-click-001, the README's single-task example: runs share a task


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
    commands = readme_commands(r"experiments\.\w+")
    # system_one=http needs a server (below); the local model's sweep is run by tests/experiments/test_review.py
    # a command the README gives twice (its quick start and its reference) is run once
    jobs = list(dict.fromkeys(tuple(c) for c in commands
                              if c[0] in ("experiments.run", "experiments.score", "experiments.render")
                              and "system_one=http" not in c and "system_one=local_llm" not in c))
    for argv in jobs:
        proc = _run(ws, _narrowed(argv), env={"LOCLAB_SWEBENCH_LITE": str(swebench_file)})
        assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stderr[-3000:]}"
    assert _run(ws, ["experiments.run", "locator=bm25", "limit=4", "repeats=2"]).returncode == 0

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
    analysis = [c for c in commands if c[0] in ("experiments.compare", "experiments.repeatability", "experiments.calibrate",
                                                 "experiments.pareto", "experiments.compare_results", "experiments.replay",
                                                 "experiments.replay_render")]
    assert len(analysis) == 9
    for argv in analysis:
        args = [subs.get(a, a) for a in argv[1:] if not a.startswith("[") and a not in ("…]",)]
        if argv[0] in ("experiments.replay", "experiments.replay_render"):
            args += ["--db", str(ws.db)]
        elif argv[0] != "experiments.compare_results":
            args += ["--db", str(ws.db), "--out", str(ws.root / "report" / argv[0])]
        proc = subprocess.run([sys.executable, "-m", argv[0], *args], cwd=PROJECT_ROOT, env=ws.env(),
                              capture_output=True, text=True, timeout=300)
        changed = argv[0] == "experiments.replay" and any("=" in a for a in args)  # differences exit 1 by design
        assert proc.returncode in ((0, 1) if changed else (0,)), \
            f"{' '.join(argv)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        if argv[0] == "experiments.replay":
            assert "tasks byte-identical to the recorded results" in proc.stdout

    [compile_cmd] = [c for c in commands if c[0] == "experiments.manifest"]
    target = tmp_path / "manifest.jsonl"
    proc = subprocess.run([sys.executable, "-m", *compile_cmd[:-1], str(target)], cwd=PROJECT_ROOT, env=ws.env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert target.read_bytes() == (PROJECT_ROOT / compile_cmd[-1]).read_bytes()  # the committed manifest is current

"""Exact replay of a recorded job, the render stage on saved results, and seed 002's render A/B —
real jobs into a real MLflow store, read back by the real commands."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from experiments.analysis import replay, replay_render
from locator.system_one.cache import DecisionCache
from tests.experiments.cli import Workspace

pytestmark = pytest.mark.network  # the demo set's subjects are pip-downloaded once per session


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, subject_cache):
    ws = Workspace(tmp_path_factory.mktemp("replay"), subject_cache)
    data = ("limit=2",)  # demo-itsdangerous-001 and -002: a primary file each, at 0.8 <= noul < 0.99
    proc = ws.run("experiments.run", "locator=two_phase", *data)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs()
    return ws, job, data


@pytest.fixture
def replay_env(recorded, monkeypatch):
    ws, job, _ = recorded
    for name, value in ws.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return ws, job


def _replay(ws, *args):
    return replay.main(["--db", str(ws.db), "--experiment", "loclab-demo", *args])


def test_a_job_records_what_a_replay_needs(recorded):
    ws, job, _ = recorded
    client = ws.client()
    artifacts = {a.path for a in client.list_artifacts(job.info.run_id)}
    assert {"hydra", "decisions.jsonl", "context_packs", "results"} <= artifacts
    assert {a.path for a in client.list_artifacts(job.info.run_id, "hydra")} >= {"hydra/config.yaml", "hydra/overrides.yaml"}
    assert job.data.tags["loclab.manifest_source"].endswith("manifest.jsonl")
    rows = [json.loads(line) for line in open(client.download_artifacts(job.info.run_id, "decisions.jsonl", str(ws.root)))]
    assert rows and len({r["key"] for r in rows}) == len(rows)
    cache = DecisionCache(ws.subject_cache / "system_one" / "decisions.sqlite")
    for row in rows:  # the snapshot holds exactly the cache's entries for the keys the run used
        assert cache.get(row["key"]).model_dump(mode="json") == row["response"]
    assert row["backend"] == job.data.tags["loclab.system_one_identity"]


def test_replay_reproduces_every_task_byte_for_byte(replay_env, capsys):
    ws, job = replay_env
    assert _replay(ws, job.info.run_id) == 0
    out = capsys.readouterr().out
    assert "2/2 tasks byte-identical" in out and out.count(": identical") == 2


def test_a_changed_reader_parameter_is_reported_per_task(replay_env, capsys):
    ws, job = replay_env
    assert _replay(ws, job.info.run_id, "locator.reader.evidence.primary_threshold=0.99") == replay.EXIT_DIFFERENT
    out = capsys.readouterr().out
    assert "config changed: locator.reader.evidence.primary_threshold=0.99" in out
    assert '.role: "primary" → "supporting"' in out and "2/2 tasks byte-identical" not in out


def test_a_request_the_run_never_asked_is_a_miss_not_a_new_call(replay_env, capsys):
    ws, job = replay_env
    assert _replay(ws, job.info.run_id, "locator.reader.sources.windows.window_lines=60") == replay.EXIT_DIFFERENT
    assert "SnapshotMissError" in capsys.readouterr().out


def test_a_misspelt_override_is_an_error(replay_env, capsys):
    ws, job = replay_env
    assert _replay(ws, job.info.run_id, "locator.reader.no_such_knob=1") == replay.EXIT_REFUSED
    assert "override not in the recorded config" in capsys.readouterr().err


def test_changed_code_is_refused_unless_allowed(replay_env, capsys):
    ws, job = replay_env
    client = ws.client()
    recorded = job.data.tags["loclab.code_identity"]
    client.set_tag(job.info.run_id, "loclab.code_identity", "0" * 64)  # as if produced by another build
    try:
        assert _replay(ws, job.info.run_id) == replay.EXIT_REFUSED
        assert "refused: the code that localizes differs" in capsys.readouterr().err
        assert _replay(ws, job.info.run_id, "--allow-code-change") == 0
        assert "code changed: recorded 000000000000" in capsys.readouterr().out
    finally:
        client.set_tag(job.info.run_id, "loclab.code_identity", recorded)


def test_render_ab_replays_stored_results_through_both_versions(replay_env, capsys):
    ws, job = replay_env
    assert replay_render.main(["--db", str(ws.db), "--experiment", "loclab-demo", job.info.run_id]) == 0
    out = capsys.readouterr().out
    table = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in out.splitlines() if line.startswith("| ")}
    assert table["source sections byte-identical"][-1].startswith("2 / 2")
    assert table["packs over the inline cap"] == ["0", "0 |"]
    assert table["packs offering Read"][-1].startswith("0")
    assert table["… of which a section was actually trimmed"][-1].startswith("0")


def test_the_render_stage_sweeps_the_cap_on_saved_results(recorded):
    ws, job, data = recorded
    proc = ws.run("experiments.render", "locator=two_phase", "render.cap_tokens=600,25000", *data, multirun=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    renders = [r for r in ws.jobs("loclab-demo") if r.data.tags["loclab.stage"] == "render"]
    assert len(renders) == 2 and all(r.data.metrics["6 tasks/reused"] == 2 for r in renders)
    by_cap = {r.data.params["render.cap_tokens"]: r for r in renders}
    small, full = by_cap["600"].data.metrics, by_cap["25000"].data.metrics
    assert small["2 cost/rendered_tokens"] <= 600 and small["2 cost/rendered_tokens"] < full["2 cost/rendered_tokens"]
    # the larger cap sends more of what is wanted (all of it, but for a span too long to send whole)
    assert small["2 cost/wanted_lines_sent"] < full["2 cost/wanted_lines_sent"] <= full["2 cost/wanted_lines"]
    assert small["4 pack/trimmed_notes"] >= full["4 pack/trimmed_notes"] and small["4 pack/trimmed_notes"] > 0
    assert all(r.data.metrics["2 cost/over_cap"] == 0 and r.data.metrics["4 pack/false_complete_claims"] == 0 for r in renders)
    table = pd.read_csv(ws.client().download_artifacts(by_cap["600"].info.run_id, "per_task.csv", str(ws.root)))
    assert {"claims_complete", "trimmed_notes", "wanted_lines_sent", "pointer_entries"} <= set(table.columns)
    packs = {a.path for a in ws.client().list_artifacts(by_cap["600"].info.run_id, "context_packs/demo-itsdangerous-001")}
    assert packs == {"context_packs/demo-itsdangerous-001/r0.md", "context_packs/demo-itsdangerous-001/r0.html"}


def test_replays_leave_no_temporary_folder_behind(replay_env, capsys, tmp_path, monkeypatch):
    ws, job = replay_env
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    assert _replay(ws, job.info.run_id) == 0
    assert replay_render.main(["--db", str(ws.db), "--experiment", "loclab-demo", job.info.run_id]) == 0
    assert "a temporary folder (removed after" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("cap", "message"), [("0", "--cap-tokens is a positive number of tokens, got 0"),
                                              ("-5", "--cap-tokens is a positive number of tokens, got -5"),
                                              ("100", "render settings with --cap-tokens 100:")])
def test_a_cap_that_cannot_render_is_one_clear_error(replay_env, capsys, cap, message):
    ws, job = replay_env
    assert replay_render.main(["--db", str(ws.db), "--experiment", "loclab-demo", job.info.run_id,
                               "--cap-tokens", cap]) == 2
    assert message in capsys.readouterr().err


def _artifact(ws, job, path: str) -> Path:
    root = ws.client().get_run(job.info.run_id).info.artifact_uri.removeprefix("file://")
    return Path(root) / path


@pytest.fixture
def corrupted(replay_env):
    """Breaks one artifact of the recorded run for one test, restoring it after."""
    ws, job = replay_env
    saved: dict = {}

    def corrupt(path: str, text: str) -> None:
        file = _artifact(ws, job, path)
        saved[file] = file.read_bytes()
        file.write_text(text, encoding="utf-8")

    yield corrupt
    for file, content in saved.items():
        file.write_bytes(content)


def test_a_corrupt_recorded_config_is_one_error_naming_the_artifact(replay_env, corrupted, capsys):
    ws, job = replay_env
    corrupted("hydra/config.yaml", "locator: [unclosed\n  : :\n")
    assert _replay(ws, job.info.run_id) == 2
    assert replay_render.main(["--db", str(ws.db), "--experiment", "loclab-demo", job.info.run_id]) == 2
    err = capsys.readouterr().err
    assert err.count(f"error: run {job.info.run_id}'s hydra/config.yaml artifact is not a readable config") == 2


def test_a_recorded_config_without_a_locator_is_one_error_not_a_traceback(replay_env, corrupted, capsys):
    ws, job = replay_env
    corrupted("hydra/config.yaml", "dataset: {name: demo}\nrepeats: 1\n")
    assert _replay(ws, job.info.run_id) == 2
    err = capsys.readouterr().err
    assert f"error: run {job.info.run_id}'s hydra/config.yaml artifact has no locator, paths, system_one, sampling" in err
    assert "Traceback" not in err


def test_a_corrupt_recorded_result_is_named_and_not_counted_identical(replay_env, corrupted, capsys):
    ws, job = replay_env
    corrupted("results/demo-itsdangerous-001/r0/localization-result.json", '{"schema_version": 1, "task_id": ')
    assert _replay(ws, job.info.run_id) == 1
    out = capsys.readouterr().out
    assert ("demo-itsdangerous-001/r0: the recorded result cannot be compared — run "
            f"{job.info.run_id}'s artifact results/demo-itsdangerous-001/r0/localization-result.json is not a loclab result") in out
    assert "1/2 tasks byte-identical" in out
    assert replay_render.main(["--db", str(ws.db), "--experiment", "loclab-demo", job.info.run_id]) == 2
    assert "results/demo-itsdangerous-001/r0/localization-result.json is not a loclab result" in capsys.readouterr().err


@pytest.mark.parametrize("tool", [replay.main, replay_render.main])
def test_a_misspelt_store_path_is_an_error_not_a_new_empty_store(replay_env, capsys, tool):
    ws, job = replay_env
    typo = ws.root / "mlfow.db"
    assert tool(["--db", str(typo), job.info.run_id]) == 2
    assert f"error: no MLflow store at {typo} (from --db)" in capsys.readouterr().err
    assert not typo.exists()

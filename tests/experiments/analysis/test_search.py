"""`experiments.analysis.calibrate --search`: an ask-and-tell Optuna search over four knobs, every trial a job
under one parent, chosen on dev and reported on test, resumable after kill -9 (issue 49)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from experiments.analysis.search import SearchError, SearchSpec, importance_figure, knob_names, load_spec, trials_table
from tests.experiments.cli import Workspace


def test_the_default_search_is_the_seeds_four_reader_knobs():
    spec = load_spec("reader_knobs", [])
    assert len(spec.space) == 4 and spec.sampler.value == "tpe" and spec.choose_split == "dev"
    assert load_spec("reader_knobs", ["search.seed=7"]).seed == 7


def test_a_bad_search_names_its_file_and_field():
    with pytest.raises(SearchError, match=r"reader_knobs.yaml: field trials"):
        load_spec("reader_knobs", ["search.trials=0"])
    with pytest.raises(SearchError, match="no search 'readr_knobs'.*known: .*reader_knobs"):
        load_spec("readr_knobs", [])
    with pytest.raises(SearchError, match=r"field space.bad: Value error, a float knob needs low <= high"):
        load_spec("reader_knobs", ["+search.space.bad={type: float, low: 0.9, high: 0.1}"])


def test_knobs_are_named_short_unless_two_would_share_a_name():
    assert knob_names(["a.reader.batch", "b.discovery.batch", "a.x.threshold"]) == {
        "a.reader.batch": "reader.batch", "a.x.threshold": "threshold", "b.discovery.batch": "discovery.batch"}


def test_the_recommendation_is_chosen_on_dev_and_the_front_is_dev_s():
    """The trial with the best dev quality is recommended whatever its test quality; the Pareto set
    is (dev quality up, dev cost down)."""
    import optuna

    spec = SearchSpec.model_validate(load_spec("reader_knobs", []).model_dump() | {"trials": 3})
    study = optuna.create_study(directions=["maximize", "minimize"])
    rows = [(0.2, 100.0, 0.9, 50.0), (0.5, 300.0, 0.1, 150.0), (0.4, 400.0, 0.8, 200.0)]  # dev q, dev c, test q, test c
    for i, (dq, dc, tq, tc) in enumerate(rows):
        trial = study.ask()
        for key, knob in spec.space.items():
            trial.suggest_float(key, knob.low, knob.high) if knob.type == "float" else trial.suggest_int(key, int(knob.low), int(knob.high))
        for name, value in {"file_recall[dev]": dq, "input_tokens[dev]": dc, "file_recall[test]": tq,
                            "input_tokens[test]": tc, "run_id": f"run{i}"}.items():
            trial.set_user_attr(name, value)
        study.tell(trial, [dq, dc])
    frame = trials_table(study, spec)
    assert list(frame.index[frame.recommended]) == [1]  # best on dev, though the worst on test
    assert list(frame.index[frame["pareto[dev]"]]) == [0, 1]  # 2 is dominated by 1 on dev
    with_budget = trials_table(study, spec.model_copy(update={"budget": 200.0}))
    assert list(with_budget.index[with_budget.recommended]) == [0]
    figure = importance_figure({"file_recall": {"locator.reader.action_threshold": 0.7, "locator.discovery.file_threshold": 0.3}}, "t")
    assert [t.get_text() for t in figure.axes[0].get_yticklabels()] == ["file_threshold", "action_threshold"]


@pytest.mark.slow
def test_a_four_knob_search_runs_resumes_after_kill_9_and_recommends_on_dev(tmp_path, subject_cache):
    ws = Workspace(tmp_path, subject_cache)
    cmd = [sys.executable, "-m", "experiments.analysis.calibrate", "--search", "reader_knobs", "--trials", "4"]
    first = subprocess.Popen(cmd, cwd=ws.project, env=ws.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
    seen = []
    for line in first.stdout:  # killed once a trial has finished, while the next one runs
        seen.append(line)
        if line.startswith("trial 0 "):
            time.sleep(1.5)
            os.killpg(first.pid, signal.SIGKILL)
            break
    first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL, "".join(seen)[-3000:]
    second = subprocess.run(cmd, cwd=ws.project, env=ws.env(), capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'search'")
    assert parent.info.status == "FINISHED"  # the one parent, taken up again
    assert parent.data.params["search.sampler"] == "tpe" and parent.data.params["search.seed"] == "0"
    jobs = ws.runs(filter_string=f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
    finished = [j for j in jobs if j.info.status == "FINISHED"]
    assert not [j for j in jobs if j.info.status == "RUNNING"]
    assert len({j.data.tags["loclab.search_trial"] for j in finished}) == len(finished) == 4  # no trial twice
    assert all(j.data.params["0 swept/batch_size"] for j in finished)
    logged = json.loads(Path(ws.client().download_artifacts(parent.info.run_id, "search_trials.json", str(tmp_path))).read_text())
    table = pd.DataFrame(logged["data"], columns=logged["columns"])
    chosen = table[table.recommended].iloc[0]
    assert chosen["file_recall[dev]"] == table["file_recall[dev]"].max()
    assert parent.data.metrics["1 quality/file_recall_dev"] == pytest.approx(chosen["file_recall[dev]"], abs=1e-4)
    assert parent.data.metrics["1 quality/file_recall_test"] == pytest.approx(chosen["file_recall[test]"], abs=1e-4)
    assert parent.data.metrics["8 sweep/trials"] == 4
    artifacts = {a.path for a in ws.client().list_artifacts(parent.info.run_id)}
    assert {"search_trials.json", "search_importances.png"} <= artifacts
    assert "Recommended by max file_recall on dev" in parent.data.tags["mlflow.note.content"]
    # Optuna was told the dev numbers (what it samples from and the importances rest on), never test's
    import optuna

    [store] = (tmp_path / "results" / "searches").glob("*/optuna.db")
    [summary] = optuna.get_all_study_summaries(f"sqlite:///{store}")
    study = optuna.load_study(study_name=summary.study_name, storage=f"sqlite:///{store}")
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert done and all(t.values == [t.user_attrs["file_recall[dev]"], t.user_attrs["input_tokens[dev]"]] for t in done)


def test_a_search_refuses_settings_it_does_not_take():
    from experiments.analysis import calibrate

    with pytest.raises(SystemExit) as exc:
        calibrate.main(["--search", "reader_knobs", "--param", "locator.top_files"])
    assert exc.value.code == 2
    from experiments.analysis.search import main_search

    assert main_search("reader_knobs", [], 0, None) == 2


@pytest.mark.slow
def test_a_search_whose_trials_all_fail_stops_and_says_so_on_its_parent(tmp_path, subject_cache):
    ws = Workspace(tmp_path, subject_cache)
    proc = subprocess.run([sys.executable, "-m", "experiments.analysis.calibrate", "--search", "reader_knobs", "--trials", "4",
                           "--set", "search.job=['locator=two_phase','dataset=demo','limit=0']"],
                          cwd=ws.project, env=ws.env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "3 trials failed in a row" in proc.stderr and "limit" in proc.stderr, proc.stderr[-2000:]
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'search'")
    assert parent.info.status == "FAILED"  # not RUNNING, not FINISHED: run again, it goes on

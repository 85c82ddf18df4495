from __future__ import annotations

import mlflow
import pytest

from experiments import run as run_module
from experiments.tracking import flatten, mlflow_key


def test_mlflow_keys_replace_the_at_sign():
    assert mlflow_key("file_acc_all@5") == "file_acc_all_at_5"


def test_flatten_takes_only_the_named_groups():
    from omegaconf import OmegaConf

    cfg = OmegaConf.create({"locator": {"reader": {"x": 1}}, "paths": {"root": "/r"}, "repeats": 2})
    assert flatten(cfg, ("locator", "repeats")) == {"locator.reader.x": 1, "repeats": 2}


def test_a_lost_dataset_insert_race_is_retried(monkeypatch):
    # Two parallel jobs registering one dataset: the loser's insert fails on the unique key (measured:
    # 15 of 30 racing pairs without a retry, 0 with it); the retry finds the row and links it.
    calls = []

    def log_input(dataset, context):
        calls.append(context)
        if len(calls) == 1:
            raise mlflow.exceptions.MlflowException("(sqlite3.IntegrityError) UNIQUE constraint failed: datasets.experiment_id")

    monkeypatch.setattr(run_module.mlflow, "log_input", log_input)
    monkeypatch.setattr(run_module.time, "sleep", lambda s: None)
    run_module._log_input(object())
    assert calls == ["evaluation", "evaluation"]


def test_other_mlflow_errors_are_not_retried(monkeypatch):
    def log_input(dataset, context):
        raise mlflow.exceptions.MlflowException("disk I/O error")

    monkeypatch.setattr(run_module.mlflow, "log_input", log_input)
    with pytest.raises(mlflow.exceptions.MlflowException, match="disk I/O"):
        run_module._log_input(object())

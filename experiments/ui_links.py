"""Links into the MLflow UI that land where a loclab user expects: an experiment's runs table.

MLflow 3.17's UI ignores the experiment's `mlflow.experimentKind` tag when it picks a view: the
workflow type comes from the URL, else from a per-browser setting that starts at GenAI, where an
experiment opens on "overview/usage" and its run pages say "Evaluations". Every link loclab prints
names the machine-learning workflow, and the UI loclab prints (`--app-name loclab`) makes it a
browser's default (experiments.mlflow_ui)."""

from __future__ import annotations

WORKFLOW_TYPE = "machine_learning"
WORKFLOW_QUERY = f"workflowType={WORKFLOW_TYPE}"
WORKFLOW_STORAGE_KEY = "mlflow.workflowType_v1"  # where the UI keeps a browser's choice (experiments.mlflow_ui)
UI_APP = "loclab"  # `mlflow ui --app-name loclab`: the entry point of experiments.mlflow_ui


def runs_view(experiment_id: str, **query: str) -> str:
    """The URL fragment of an experiment's runs table (with `query`, e.g. a shared view's key)."""
    return f"#/experiments/{experiment_id}/runs?" + "&".join([*(f"{k}={v}" for k, v in query.items()), WORKFLOW_QUERY])


def run_page(experiment_id: str, run_id: str, tab: str = "") -> str:
    """The URL fragment of one run's page (`tab`: e.g. `artifacts/NAME`)."""
    return f"#/experiments/{experiment_id}/runs/{run_id}" + (f"/{tab}" if tab else "") + f"?{WORKFLOW_QUERY}"

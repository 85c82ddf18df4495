"""Links into the MLflow UI that land where a loclab user expects: an experiment's runs table.

MLflow 3.17's UI ignores the experiment's `mlflow.experimentKind` tag when it picks a view: the
workflow type comes from the URL, else from a per-browser setting that starts at GenAI, where an
experiment opens on "overview/usage" and its run pages say "Evaluations". Every link loclab prints
names the machine-learning workflow, and the UI loclab prints (`--app-name loclab`) makes it a
browser's default (experiments.tracking.ui)."""

from __future__ import annotations

import json
import time

WORKFLOW_TYPE = "machine_learning"
WORKFLOW_QUERY = f"workflowType={WORKFLOW_TYPE}"
WORKFLOW_STORAGE_KEY = "mlflow.workflowType_v1"  # where the UI keeps a browser's choice (experiments.tracking.ui)
UI_APP = "loclab"
# MLflow's saved views: the experiment tag `mlflow.sharedViewState.K` holds a view (search, sort, columns,
# which runs the charts plot) that the runs page's "Views" menu lists by name and `?viewStateShareKey=K`
# opens (vocabulary.SHARED_VIEW_PREFIX); loclab writes one per sweep, keyed by the parent's run id, and one per experiment
EXPERIMENT_VIEW_KEY = "loclab"  # the experiment's own view: every sweep's best job first (sweep_record.experiment_view)


def runs_view(experiment_id: str, **query: str) -> str:
    """The URL fragment of an experiment's runs table (with `query`, e.g. a shared view's key)."""
    return f"#/experiments/{experiment_id}/runs?" + "&".join([*(f"{k}={v}" for k, v in query.items()), WORKFLOW_QUERY])


def run_page(experiment_id: str, run_id: str, tab: str = "") -> str:
    """The URL fragment of one run's page (`tab`: e.g. `artifacts/NAME`)."""
    return f"#/experiments/{experiment_id}/runs/{run_id}" + (f"/{tab}" if tab else "") + f"?{WORKFLOW_QUERY}"


def saved_view(name: str, state: dict) -> str:
    """The value of a saved view's tag as MLflow 3.17's UI writes it (its envelope: a name for the
    "Views" menu, times in ms, the state as JSON text); a bare state also opens by its key but is
    listed nowhere."""
    now = int(time.time() * 1000)
    return json.dumps({"name": name, "createdAt": now, "updatedAt": now, "state": json.dumps(state)})


def view_state(tag_value: str) -> dict:
    """A saved view's state from its tag value."""
    return json.loads(json.loads(tag_value)["state"])

"""`mlflow ui --app-name loclab` (and `mlflow server --app-name loclab`): MLflow's own server, whose
pages open in the machine-learning workflow.

MLflow 3.17's UI keeps its workflow (GenAI or machine learning) per browser, in local storage, and
starts at GenAI whatever the experiment's `mlflow.experimentKind` tag says: a loclab experiment
opened on "overview/usage" (its traces counted, its runs table one click away) and every run page's
breadcrumb said "Evaluations". The one page every UI route serves, index.html, gets a line that
sets the workflow to machine learning in a browser that has not chosen one; a browser that chose
GenAI with the UI's own switch keeps it. Registered as an `mlflow.app` entry point (pyproject.toml),
the plugin mechanism MLflow's basic-auth app uses."""

from __future__ import annotations

import os

from flask import Flask, Response, request

from experiments.ui_links import WORKFLOW_STORAGE_KEY, WORKFLOW_TYPE

# the value the UI's own switch stores (its useLocalStorage hook: JSON under `<key>_v<version>`)
DEFAULT_WORKFLOW = (f'<script>try{{localStorage.getItem("{WORKFLOW_STORAGE_KEY}")||localStorage.setItem('
                    f'"{WORKFLOW_STORAGE_KEY}",JSON.stringify("{WORKFLOW_TYPE}"))}}catch(e){{}}</script>').encode()


def _default_workflow(response: Response) -> Response:
    if response.status_code == 200 and response.mimetype == "text/html" and request.method == "GET":
        response.direct_passthrough = False  # a file response streams; its body is read to be changed
        body = response.get_data()
        if b"<head>" in body and DEFAULT_WORKFLOW not in body:
            response.set_data(body.replace(b"<head>", b"<head>" + DEFAULT_WORKFLOW, 1))
    return response


def create_app(app: Flask | None = None):
    """MLflow's Flask app with the default workflow; under uvicorn (`mlflow ui`'s default server)
    wrapped in MLflow's FastAPI app, as its basic-auth plugin is."""
    if app is None:
        from mlflow.server import app
    app.after_request(_default_workflow)
    if os.environ.get("_MLFLOW_SGI_NAME") == "uvicorn":
        from mlflow.server.fastapi_app import create_fastapi_app

        return create_fastapi_app(app)
    return app

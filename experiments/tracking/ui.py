"""`mlflow ui --app-name loclab` (and `mlflow server --app-name loclab`): MLflow's own server, whose
pages open in the machine-learning workflow, and an experiment on its loclab view.

MLflow 3.17's UI keeps its workflow (GenAI or machine learning) per browser, in local storage, and
starts at GenAI whatever the experiment's `mlflow.experimentKind` tag says: a loclab experiment
opened on "overview/usage" (its traces counted, its runs table one click away) and every run page's
breadcrumb said "Evaluations". The one page every UI route serves, index.html, gets a line that
sets the workflow to machine learning in a browser that has not chosen one (a browser that chose
GenAI with the UI's own switch keeps it), and lines that open an experiment on its loclab view and a
sweep parent's description unfolded. Registered as an `mlflow.app` entry point (pyproject.toml),
the plugin mechanism MLflow's basic-auth app uses."""

from __future__ import annotations

import os

from flask import Flask, Response, request

from experiments.tracking.links import EXPERIMENT_VIEW_KEY, WORKFLOW_STORAGE_KEY, WORKFLOW_TYPE
from experiments.tracking.vocabulary import SHARED_VIEW_PREFIX, RunKind, Tag

# the value the UI's own switch stores (its useLocalStorage hook: JSON under `<key>_v<version>`)
DEFAULT_WORKFLOW = (f'<script>try{{localStorage.getItem("{WORKFLOW_STORAGE_KEY}")||localStorage.setItem('
                    f'"{WORKFLOW_STORAGE_KEY}",JSON.stringify("{WORKFLOW_TYPE}"))}}catch(e){{}}</script>').encode()
# An experiment opened bare (`#/experiments/N`, no search, no view in the URL) by a browser that keeps
# no view of its own for it (MLflow's `ExperimentPage-N` local-storage state) opens on the experiment's
# loclab view when it has one (the tag `mlflow.sharedViewState.loclab`, experiments.tracking.sweep_record's
# experiment_view): jobs only, every sweep's best first, so the chart view, which plots the first 10
# rows, shows each sweep's winner. MLflow's own default, newest first with parents folded, plotted
# parents and reports and hid the winners. Read once, at page load; the UI's "exit shared view" and
# every later visit are the browser's own.
DEFAULT_VIEW = ("<script>try{(function(){"
                "var m=location.hash.match(/^#\\/experiments\\/(\\d+)(\\/runs)?\\/?(\\?(.*))?$/);if(!m)return;"
                "var q=new URLSearchParams(m[4]||'');for(var k of q.keys())if(k!=='workflowType')return;"
                "if(localStorage.getItem('MLflowLocalStorage-1.1-ExperimentPage-'+m[1]+'-ReactComponentState'))return;"
                "var x=new XMLHttpRequest();x.open('GET','ajax-api/2.0/mlflow/experiments/get?experiment_id='+m[1],false);x.send();"
                "if(x.status!==200)return;var tags=JSON.parse(x.responseText).experiment.tags||[];"
                f"if(!tags.some(function(t){{return t.key==='{SHARED_VIEW_PREFIX}{EXPERIMENT_VIEW_KEY}'}}))return;"
                f"q.set('viewStateShareKey','{EXPERIMENT_VIEW_KEY}');q.set('workflowType','{WORKFLOW_TYPE}');"
                "location.replace('#/experiments/'+m[1]+'/runs?'+q.toString());"
                "})()}catch(e){}</script>").encode()
# A sweep parent's page answers "which setting wins" in its description (the jobs best first, the
# difference to the best with its paired CI, the compare report's link), and MLflow folds a description
# past a few lines behind "Show more": the table was folded away. On a sweep parent's page the fold is
# opened once per page load (its toggle's test id, MLflow's own); "Show less" folds it again.
UNFOLD_SWEEP = ("<script>try{(function(){var seen={};function look(){"
                "var m=location.hash.match(/^#\\/experiments\\/\\d+\\/runs\\/([0-9a-f]{32})(\\?|$)/);if(!m||seen[m[1]])return;"
                "var b=document.querySelector('[data-testid=show-comment-toggle]');if(!b)return;seen[m[1]]=1;"
                "fetch('ajax-api/2.0/mlflow/runs/get?run_id='+m[1]).then(function(r){return r.json()}).then(function(j){"
                f"if(!(j.run.data.tags||[]).some(function(t){{return t.key==='{Tag.KIND}'&&t.value==='{RunKind.SWEEP}'}}))return;"
                "var b=document.querySelector('[data-testid=show-comment-toggle]');if(b&&b.textContent.trim()==='Show more')b.click();"
                "}).catch(function(){})}"
                "new MutationObserver(look).observe(document,{childList:true,subtree:true})})()}catch(e){}</script>").encode()
INJECTED = DEFAULT_WORKFLOW + DEFAULT_VIEW + UNFOLD_SWEEP


def _default_workflow(response: Response) -> Response:
    if response.status_code == 200 and response.mimetype == "text/html" and request.method == "GET":
        response.direct_passthrough = False  # a file response streams; its body is read to be changed
        body = response.get_data()
        if b"<head>" in body and INJECTED not in body:
            response.set_data(body.replace(b"<head>", b"<head>" + INJECTED, 1))
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

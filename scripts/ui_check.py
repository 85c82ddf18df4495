"""What a researcher sees in the real MLflow UI, checked in headless Chromium.

    apt-get install -y chromium chromium-driver && .venv/bin/pip install -e '.[ui]'
    .venv/bin/python scripts/ui_check.py [--out runs/ui-check]

Runs a small sweep (bm25 vs two_phase on two demo tasks) and a compare report into a fresh SQLite
store, starts `mlflow ui` on it, and drives Debian's Chromium with Selenium through the runs list,
a job run and the compare view: it takes a screenshot of each and asserts on what is visible (job
names from their overrides, the sweep parent's name, the run description, the grouped metric
names), and that every report artifact is served (the UI answers HTTP 400 for unsafe names).
Exits 1 listing what was not visible.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from mlflow.tracking import MlflowClient

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1600,1000")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _visible(driver, texts: list[str], timeout: float = 40.0) -> list[str]:
    """The texts not visible on the page after `timeout` seconds (the UI renders asynchronously)."""
    deadline = time.time() + timeout
    missing = texts
    while time.time() < deadline:
        body = driver.find_element("tag name", "body").text
        missing = [t for t in texts if t not in body]
        if not missing:
            return []
        time.sleep(1)
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "runs" / "ui-check"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="loclab-ui-"))
    env = os.environ | {"LOCLAB_RESULTS_DIR": str(work / "results"), "LOCLAB_MLFLOW_DB": str(work / "mlflow.db"),
                        "LOCLAB_MLFLOW_ARTIFACTS": str(work / "artifacts"), "MLFLOW_DISABLE_TELEMETRY": "true"}
    env.pop("MLFLOW_TRACKING_URI", None)
    python = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run([python, "-m", "experiments.run", "-m", "locator=bm25,two_phase", "limit=2",
                    f"hydra.sweep.dir={work}/multi"], cwd=ROOT, env=env, check=True, capture_output=True)
    uri = f"sqlite:///{work / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("loclab-demo")
    jobs = client.search_runs([experiment.experiment_id], "tags.`loclab.kind` = 'job'")
    subprocess.run([python, "-m", "experiments.compare", *[j.info.run_id for j in jobs], "--db", str(work / "mlflow.db"),
                    "--out", str(work / "report")], cwd=ROOT, env=env, check=True, capture_output=True)
    [report] = client.search_runs([experiment.experiment_id], "tags.`loclab.kind` = 'report'")
    port = _port()
    server = subprocess.Popen([str(ROOT / ".venv" / "bin" / "mlflow"), "ui", "--backend-store-uri", uri,
                               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                              env=env | {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}, cwd=work,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    failures: list[str] = []
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        for artifact in client.list_artifacts(report.info.run_id):  # served, not "Invalid path"
            url = f"{base}/get-artifact?path={quote(artifact.path)}&run_uuid={report.info.run_id}"
            try:
                urllib.request.urlopen(url, timeout=10)
            except OSError as exc:
                failures.append(f"report artifact {artifact.path}: {exc}")

        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={work / 'chromium'}")
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            job = next(j for j in jobs if j.data.tags["loclab.locator"] == "two_phase")
            views = [  # the runs table nests jobs under their (truncated) sweep parent
                ("runs_list", f"{base}/#/experiments/{experiment.experiment_id}/runs", ["sweep locator=bm2", "compare report"]),
                ("job_run", f"{base}/#/experiments/{experiment.experiment_id}/runs/{job.info.run_id}",
                 [job.info.run_name, "two_phase on demo, localize+score"]),
                ("job_metrics", f"{base}/#/experiments/{experiment.experiment_id}/runs/{job.info.run_id}/model-metrics",
                 ["quality", "file_acc_all_at_5", job.info.run_name]),  # chart sections by the key's prefix; no CI bounds
                ("compare", f"{base}/#/compare-runs?runs={quote(json.dumps([j.info.run_id for j in jobs]))}"
                            f"&experiments={quote(json.dumps([experiment.experiment_id]))}",
                 [j.info.run_name for j in jobs] + ["tasks/total"]),
            ]
            for name, url, texts in views:
                driver.get(url)
                missing = _visible(driver, texts)
                driver.save_screenshot(str(out / f"{name}.png"))
                print(f"{name}: {'ok' if not missing else 'NOT VISIBLE ' + repr(missing)} ({out / f'{name}.png'})")
                failures += [f"{name}: {text!r} not visible" for text in missing]
        finally:
            driver.quit()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    for failure in failures:
        print(f"FAILED {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

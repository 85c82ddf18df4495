"""Does the real MLflow UI answer "which setting wins?" at a glance? Checked in headless Chromium.

    apt-get install -y chromium chromium-driver && LOCLAB_EXTRAS=test,ui bash scripts/setup.sh
    .venv/bin/python scripts/ui_check.py [--out runs/ui-check]

Runs the 9-job `reader_calibration` sweep on two demo tasks into a fresh SQLite store, then the
`compare` command the sweep printed, pasted as printed (`calibrate` must not be printed: the demo set
has no dev/test split, so it would only refuse). Starts `mlflow ui` on the store and drives
Debian's Chromium (Selenium) as a researcher would, with MLflow's assistant panel closed:

- the landing page: the `jobs view:` link the sweep printed opens the experiment's runs (not MLflow's
  GenAI overview), and a run page opened from there is a run's page, not an "Evaluations" one;
- the runs table, the sweep expanded: the nine job names are distinct in the width the table shows;
- the chart view: its first section is quality, and all nine jobs are plotted (no report run hides one);
- the sweep's own view (the link on the parent's page): its nine jobs, best first, headline columns;
- the parent's page: the side-by-side table in its description and the quality-vs-cost figure;
- every artifact of every run is served (the UI answers HTTP 400 for unsafe names).

Screenshots of each view go to --out (their paths are printed); exits 1 listing every check that failed.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from mlflow.tracking import MlflowClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from experiments.metric_keys import Section  # noqa: E402 (the project root is put on the path above)
from experiments.sweep_record import SWEEP_VIEW_TAG, TABLE_ARTIFACT, FIGURE_ARTIFACT  # noqa: E402
from experiments.ui_links import run_page, runs_view  # noqa: E402

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1600,1000")
JOBS = 9
NAME_CELL = ".ag-row [col-id='attributes.`Run Name`'] a[href*='/runs/'] span"
# The text of a name cell the table shows: the longest prefix that fits the cell, less the ellipsis.
VISIBLE_TEXT = """
return [...document.querySelectorAll(arguments[0])].map(span => {
  const text = span.firstChild, range = document.createRange(), width = span.getBoundingClientRect().width;
  if (!text || span.scrollWidth <= span.clientWidth) return span.textContent;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    range.setStart(text, 0); range.setEnd(text, mid);
    if (range.getBoundingClientRect().width <= width - 12) lo = mid; else hi = mid - 1;
  }
  return text.textContent.slice(0, lo);
});"""
# A chart section's header reads "<name>" over "(<number of charts>)", then "Add chart".
SECTION_HEADER = re.compile(r"^([^\n]+)\n\((\d+)\)\nAdd chart$", re.M)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """Chromium through Selenium, with a wait for what the UI renders asynchronously."""

    def __init__(self, profile: Path, out: Path):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.out = out
        self.shots: list[Path] = []

    def open(self, url: str) -> None:
        """A page load, as a pasted link is: a URL that differs from the current one only after `#`
        would otherwise be a navigation inside the open app, not what a new tab shows."""
        self.driver.get("about:blank")
        self.driver.get(url)

    def wait(self, condition: Callable[[], object], timeout: float = 40.0) -> object:
        deadline = time.time() + timeout
        while True:
            try:
                if value := condition():
                    return value
            except Exception:  # noqa: BLE001 (an element re-rendered under us: look again)
                pass
            if time.time() > deadline:
                return None
            time.sleep(0.5)

    def text(self) -> str:
        return self.driver.find_element("tag name", "body").text

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def click(self, css: str) -> bool:
        elements = self.driver.find_elements("css selector", css)
        if elements:
            self.driver.execute_script("arguments[0].click()", elements[0])
        return bool(elements)

    def close_assistant(self) -> None:
        """MLflow's assistant panel opens on the right of every page and covers the charts."""
        self.js("""for (const b of document.querySelectorAll('button')) {
                     const panel = b.closest('div'); const label = (b.getAttribute('aria-label') || '').toLowerCase();
                     if (label.includes('close') && panel && panel.parentElement &&
                         panel.parentElement.textContent.includes('MLflow Assistant')) { b.click(); return; } }""")

    def shot(self, name: str) -> Path:
        time.sleep(1.5)  # charts animate in
        path = self.out / f"{name}.png"
        self.driver.save_screenshot(str(path))
        self.shots.append(path)
        return path

    def quit(self) -> None:
        self.driver.quit()


def _pasted(line: str) -> list[str]:
    """A printed `PYTHON -m experiments.…` command as the shell would run it from the project root, as
    printed: its interpreter is the one that ran the sweep, so it runs with no venv active."""
    return shlex.split(line.split(":", 1)[1])


def run_sweep(work: Path, env: dict[str, str], failures: list[str]) -> dict[str, str]:
    """Runs the sweep and pastes its printed commands; returns the `MLflow UI:` command and the
    `jobs view:` link it printed."""
    python = str(ROOT / ".venv" / "bin" / "python")
    proc = subprocess.run([python, "-m", "experiments.run", "-m", "experiment=reader_calibration", "limit=2",
                           f"hydra.sweep.dir={work}/multi"], cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the sweep failed:\n{proc.stderr[-3000:]}")
    shown = {m.group(1): m.group(2) for m in re.finditer(r"^(MLflow UI|jobs view): (.+)$", proc.stdout, re.M)}
    if set(shown) != {"MLflow UI", "jobs view"}:
        failures.append(f"the sweep printed {sorted(shown)}, not the MLflow UI command and the jobs view link")
    printed = {m.group(1): m.group(0) for m in re.finditer(r"^(compare|calibrate):\s+\S*python\S* -m .*$", proc.stdout, re.M)}
    if set(printed) != {"compare"}:
        failures.append(f"the sweep printed {sorted(printed)} ready-to-paste commands, not compare alone (the demo set "
                        "has no dev/test split, so calibrate would only refuse)")
        return shown
    if "calibrate: not printed: the tasks have no dev and test splits" not in proc.stdout:
        failures.append("the sweep did not say why it printed no calibrate command")
    compare = subprocess.run(_pasted(printed["compare"]) + ["--out", str(work / "compare")], cwd=ROOT, env=env,
                             capture_output=True, text=True)
    if compare.returncode != 0:
        failures.append(f"the printed compare command failed: {compare.stderr[-1500:]}")
    print(f"pasted: {printed['compare'][:100]}… exit {compare.returncode}; calibrate not printed (no dev/test split)")
    return shown


def check_artifacts(client: MlflowClient, base: str, runs, failures: list[str]) -> int:
    def walk(run_id: str, path: str | None = None):
        for item in client.list_artifacts(run_id, path):
            yield from walk(run_id, item.path) if item.is_dir else [item.path]

    served = 0
    for run in runs:
        for path in walk(run.info.run_id):
            url = f"{base}/get-artifact?path={quote(path)}&run_uuid={run.info.run_id}"
            try:
                urllib.request.urlopen(url, timeout=10)
                served += 1
            except OSError as exc:
                failures.append(f"artifact {path} of {run.info.run_name}: {exc}")
    return served


def ui_server(printed: str, port: int, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    """The `MLflow UI:` command the sweep printed, as printed, on this check's port and one worker."""
    argv = shlex.split(printed)
    if "--port" in argv:
        del argv[argv.index("--port"):argv.index("--port") + 2]
    return subprocess.Popen([*argv, "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                            env=env | {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def check_landing(browser: Browser, base: str, experiment_id: str, failures: list[str]) -> None:
    """A fresh browser opening the experiment lands on its runs table, and a run opened from there is
    a run's page (MLflow 3.17 starts every browser in its GenAI workflow, whatever the experiment's
    kind tag says: the experiment opened on "overview/usage" and run pages said "Evaluations")."""
    browser.open(f"{base}/#/experiments/{experiment_id}")
    listed = browser.wait(lambda: browser.js(f"return document.querySelectorAll(\"{NAME_CELL}\").length"))
    landed = browser.driver.current_url
    print(f"landing: {landed.removeprefix(base)}")
    if "/runs" not in landed or "/overview" in landed or not listed:
        failures.append(f"landing: the experiment opened on {landed.removeprefix(base)}, not its runs table")
        return
    browser.close_assistant()
    browser.shot("landing")
    browser.js(f"document.querySelector(\"{NAME_CELL}\").closest('a').click()")
    opened = browser.wait(lambda: re.search(r"/runs/[0-9a-f]{32}", browser.driver.current_url) and browser.text())
    lines = [line.strip() for line in (browser.text() or "").splitlines()]
    print(f"run page: {browser.driver.current_url.removeprefix(base)}, first lines {lines[:6]}")
    if not opened:
        failures.append("landing: clicking a job in the runs table opened no run page")
    elif "Evaluations" in lines:  # the GenAI workflow's breadcrumb item ("loclab-demo > Evaluations")
        failures.append("run page: opened in MLflow's GenAI workflow (its breadcrumb says Evaluations)")
    browser.shot("run_page")


def check_ui(browser: Browser, base: str, experiment_id: str, parent, jobs, failures: list[str]) -> None:
    names = {j.info.run_name for j in jobs}
    runs_url = f"{base}/{runs_view(experiment_id)}"

    # the runs table: the sweep's parent, expanded
    browser.open(runs_url)
    if not browser.wait(lambda: browser.js(f"return document.querySelectorAll(\"{NAME_CELL}\").length")):
        failures.append("runs table: no run listed")
    browser.close_assistant()
    browser.click(".ag-row [col-id='attributes.`Run Name`'] button")  # the parent's expand button
    shown = browser.wait(lambda: [t for t in browser.js(VISIBLE_TEXT, NAME_CELL) if t] if len(
        browser.js(VISIBLE_TEXT, NAME_CELL)) >= JOBS + 1 else None) or []
    full = browser.js(f"return [...document.querySelectorAll(\"{NAME_CELL}\")].map(s => s.textContent)")
    visible_jobs = [v for v, f in zip(shown, full) if f in names]
    print(f"runs table: {len(visible_jobs)} job names visible as {visible_jobs}")
    if len(visible_jobs) != JOBS:
        failures.append(f"runs table: {len(visible_jobs)} of {JOBS} job rows after expanding the sweep")
    elif len(set(visible_jobs)) != JOBS:
        failures.append(f"runs table: job names not distinct in the visible width: {visible_jobs}")
    browser.shot("runs_table")

    # the chart view of the same table
    browser.click("[data-testid='experiment-runs-mode-switch-chart'], button[aria-label*='hart']")
    if "compareRunsMode=CHART" not in browser.driver.current_url:
        browser.open(f"{runs_url}&compareRunsMode=CHART")
    sections = browser.wait(lambda: [m.group(1) for m in SECTION_HEADER.finditer(browser.text())]) or []
    print(f"chart view sections: {sections}")
    if not sections or not sections[0].startswith(Section.QUALITY.value):
        failures.append(f"chart view: the first section is {sections[:1] or 'none'}, not {Section.QUALITY.value}")
    hidden = browser.js("return [...document.querySelectorAll('.ag-row')].filter(r => r.querySelector("
                        "'[data-testid*=\"hidden\"], [aria-label*=\"Show run\"]')).map(r => r.textContent)")
    plotted_jobs = [n for n in names if n in browser.text() and not any(n in h for h in hidden)]
    if len(plotted_jobs) != JOBS:
        failures.append(f"chart view: {len(plotted_jobs)} of {JOBS} jobs plotted (hidden rows: {hidden})")
    browser.shot("chart_view")

    # the sweep's own view: the link on the parent's page
    view = parent.data.tags.get(SWEEP_VIEW_TAG)
    if not view:
        failures.append(f"the sweep's parent has no {SWEEP_VIEW_TAG} tag")
    else:
        browser.open(f"{base}/{view}")
        rows = browser.wait(lambda: (lambda r: r if len(r) >= JOBS else None)(
            browser.js(f"return [...document.querySelectorAll(\"{NAME_CELL}\")].map(s => s.textContent)")))
        if not rows or set(rows) != names:
            failures.append(f"sweep view: rows {rows} are not the sweep's {JOBS} jobs")
        browser.close_assistant()
        browser.shot("sweep_view")

    # the parent's page: the table in the description and the figure among its artifacts
    browser.open(f"{base}/{run_page(experiment_id, parent.info.run_id)}")
    if not browser.wait(lambda: "Best by" in browser.text() and "file_acc_all@5" in browser.text()):
        failures.append("parent page: the side-by-side table is not in the description")
    browser.close_assistant()
    browser.shot("parent_page")
    browser.open(f"{base}/{run_page(experiment_id, parent.info.run_id, f'artifacts/{FIGURE_ARTIFACT}')}")
    if not browser.wait(lambda: browser.js("return [...document.images].some(i => i.naturalWidth > 400)")):
        failures.append(f"parent page: the figure {FIGURE_ARTIFACT} does not show")
    if TABLE_ARTIFACT not in browser.text():
        failures.append(f"parent page: {TABLE_ARTIFACT} is not among the artifacts")
    browser.shot("parent_figure")


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
    failures: list[str] = []
    printed = run_sweep(work, env, failures)
    uri = f"sqlite:///{work / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("loclab-demo")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()], max_results=1000)
    [parent] = [r for r in runs if r.data.tags.get("loclab.kind") == "sweep"]
    jobs = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id
            and r.data.tags.get("loclab.kind") == "job"]
    port = _port()
    if "MLflow UI" not in printed:
        for failure in failures:
            print(f"FAILED {failure}")
        return 1
    server = ui_server(printed["MLflow UI"], port, env, work)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        served = check_artifacts(client, base, runs, failures)
        print(f"artifacts: {served} served of {len(runs)} runs")
        browser = Browser(work / "chromium", out)
        try:
            check_landing(browser, base, experiment.experiment_id, failures)
            if printed.get("jobs view"):  # the sweep's printed link, on this check's port
                view = printed["jobs view"]
                browser.open(base + view[view.index("/#/"):])
                listed = browser.wait(lambda: browser.js(f"return document.querySelectorAll(\"{NAME_CELL}\").length"))
                if not listed or "/runs" not in browser.driver.current_url:
                    failures.append(f"the printed jobs view opened {browser.driver.current_url.removeprefix(base)}")
            check_ui(browser, base, experiment.experiment_id, parent, jobs, failures)
        finally:
            browser.quit()
        for path in browser.shots:
            print(f"screenshot: {path}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    for failure in failures:
        print(f"FAILED {failure}")
    print("ui check: " + ("ok" if not failures else f"{len(failures)} failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Does the real MLflow UI answer "which setting wins?" at a glance? Checked in headless Chromium.

    apt-get install -y chromium chromium-driver && LOCLAB_EXTRAS=test,ui bash scripts/setup.sh
    .venv/bin/python scripts/ui_check.py [--out runs/ui-check]

Builds the store a user would have, in a fresh SQLite file, on the whole demo set (13 tasks): two sweeps
whose settings differ in outcome (the 9-job `reader_calibration`, and `locator=two_phase,hybrid,bm25`,
which launches its worst arm first), a repeats job, and the `compare` and `calibrate` reports the first
sweep printed, pasted as printed: 15 runs in the experiment, 2 in its reports' experiment. Starts the `mlflow ui` command the sweep printed and drives Debian's Chromium (Selenium) as a
researcher would, with MLflow's assistant panel closed, asserting:

- landing: the experiment opened bare lands on its runs, in loclab's view (every sweep's best first),
  not MLflow's GenAI overview; a run opened from there is a run's page, not an "Evaluations" one;
- the chart view plots each sweep's best job (MLflow plots the first 10 rows of the table);
- each sweep's parent page: its table's rows are in the order of the headline metric, best first, the
  best row on the first screen (not folded behind "Show more"); it links its compare report on the
  first screen, and the link opens that report run;
- Compare of a sweep's jobs opens on a parallel coordinates plot of the swept keys against the headline
  metric, and no two of its labels overlap nor does the plot's edge cut one (their rendered boxes);
- a job's page lists quality metrics first;
- the runs table, the sweep expanded: the nine job names are distinct in the width the table shows;
  the sweep's own view (the link on the parent's page) holds its jobs; the parent's figure shows;
  every artifact of every run is served (the UI answers HTTP 400 for unsafe names).

Screenshots of each view go to --out (their paths are printed); exits 1 listing every check that failed.
"""

from __future__ import annotations

import argparse
import json
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

from experiments.tracking.metric_keys import metric_key  # noqa: E402 (the root is on the path above)
from experiments.tracking.sweep_record import TABLE_ARTIFACT, FIGURE_ARTIFACT  # noqa: E402
from experiments.tracking.sweep_summary import BEST_BY  # noqa: E402
from experiments.tracking.links import EXPERIMENT_VIEW_KEY, WORKFLOW_QUERY, run_page  # noqa: E402
from experiments.tracking.vocabulary import SWEPT_PARAM_GROUP, MlflowTag, RunKind, Section, Tag  # noqa: E402

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


SWEEPS = (("experiment=reader_calibration",), ("locator=two_phase,hybrid,bm25",))  # the second launches its worst arm first


def _run(python: str, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run([python, "-m", "experiments.run", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-3000:]}")
    return proc


def build_store(work: Path, env: dict[str, str], failures: list[str]) -> dict[str, str]:
    """The store a user would have: two sweeps, a repeats job, and the compare and calibrate reports the
    first sweep printed, pasted as printed; returns the `MLflow UI:` command and the `jobs view:` link it printed."""
    python = str(ROOT / ".venv" / "bin" / "python")
    outputs = [_run(python, ["-m", *sweep, f"hydra.sweep.dir={work}/multi{i}"], env).stdout for i, sweep in enumerate(SWEEPS)]
    _run(python, ["locator=two_phase", "repeats=2", f"hydra.run.dir={work}/repeats"], env)
    stdout = outputs[0]
    shown = {m.group(1): m.group(2) for m in re.finditer(r"^(MLflow UI|jobs view): (.+)$", stdout, re.M)}
    if set(shown) != {"MLflow UI", "jobs view"}:
        failures.append(f"the sweep printed {sorted(shown)}, not the MLflow UI command and the jobs view link")
    printed = {m.group(1): m.group(0) for m in re.finditer(r"^(compare|calibrate):\s+\S*python\S* -m .*$", stdout, re.M)}
    if set(printed) != {"compare", "calibrate"}:
        failures.append(f"the sweep printed {sorted(printed)} ready-to-paste commands, not compare and calibrate "
                        "(the demo set has dev and test splits)")
    for command, line in sorted(printed.items()):
        pasted = subprocess.run(_pasted(line) + ["--out", str(work / command)], cwd=ROOT, env=env, capture_output=True, text=True)
        if pasted.returncode != 0:
            failures.append(f"the printed {command} command failed: {pasted.stderr[-1500:]}")
        print(f"pasted: {line[:100]}… exit {pasted.returncode}")
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
    if f"viewStateShareKey={EXPERIMENT_VIEW_KEY}" not in landed:
        failures.append(f"landing: the experiment opened on {landed.removeprefix(base)}, not loclab's view (every sweep's best first)")
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


# the rendered boxes of a plot's axis titles (a parallel coordinates plot's too), as [text, left, top, right,
# bottom, the plot's left, the plot's right]: a title cut by the plot's edge is as unreadable as one overprinted
LABEL_BOXES = """
return [...document.querySelectorAll(arguments[0])].map(t => { const r = t.getBoundingClientRect(),
  s = t.closest('svg').getBoundingClientRect();
  return [t.textContent, r.left, r.top, r.right, r.bottom, s.left, s.right]; }).filter(b => b[0] && b[3] > b[1]);"""


# the chart view's run list: the names of the rows whose eye is open ("Hide run"), which the charts plot
PLOTTED_RUNS = """
const shown = new Set([...document.querySelectorAll('.ag-row')].filter(r => [...r.querySelectorAll('label')].some(
  l => l.textContent === 'Hide run')).map(r => r.getAttribute('row-id')));
return [...new Set([...document.querySelectorAll('.ag-row')].filter(r => shown.has(r.getAttribute('row-id')))
  .map(r => r.querySelector("a[href*='/runs/'] span")?.textContent).filter(Boolean))];"""


def overlapping(boxes: list) -> list[tuple[str, str]]:
    """Pairs of labels whose rendered boxes intersect."""
    return [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]]


def runs_of(browser: Browser, base: str, experiment_id: str) -> list[dict]:
    """The experiment's jobs as the UI's own REST API serves them: run id and repeats param."""
    found = browser.js("""const r = new XMLHttpRequest(); r.open('POST', arguments[0] + '/ajax-api/2.0/mlflow/runs/search', false);
        r.setRequestHeader('Content-Type', 'application/json');
        r.send(JSON.stringify({experiment_ids: [arguments[1]], max_results: 1000})); return r.responseText;""", base, experiment_id)
    return [{"run_id": run["info"]["run_id"],
             "repeats": next((p["value"] for p in run["data"].get("params", []) if p["key"] == "repeats"), None)}
            for run in json.loads(found).get("runs", [])]


def check_decisions(browser: Browser, base: str, experiment_id: str, sweeps: list, jobs_of: dict, failures: list[str]) -> None:
    """What a researcher opens the UI to decide, for every sweep: its best job plotted in the
    experiment's chart view, its parent's table best first, Compare on the swept keys against the
    headline metric, its labels apart, and a job's page leading with quality."""
    headline = metric_key(BEST_BY[0])
    best = {s.info.run_id: s.data.tags.get(Tag.BEST_JOB) for s in sweeps}
    names = {j.info.run_id: j.info.run_name for js in jobs_of.values() for j in js}

    # the chart view of the experiment as it opens: MLflow plots the first 10 rows that are not hidden
    browser.open(f"{base}/#/experiments/{experiment_id}")
    browser.wait(lambda: browser.js(f"return document.querySelectorAll(\"{NAME_CELL}\").length"))
    browser.close_assistant()
    browser.js("document.querySelector(\"input[type=radio][value='CHART']\").click()")
    plotted = browser.wait(lambda: browser.js(PLOTTED_RUNS)) or []
    missing = [names.get(b, b) for b in best.values() if names.get(b) not in plotted]
    print(f"chart view as the experiment opens: {len(plotted)} runs plotted; each sweep's best among them: {not missing}")
    if missing:
        failures.append(f"chart view: a sweep's best job is not plotted: {missing} (plotted: {plotted})")
    browser.shot("chart_view_bests")

    for sweep in sweeps:
        label = sweep.info.run_name
        # the parent's table, in its description: best first, in the order of the headline metric
        browser.open(f"{base}/{run_page(experiment_id, sweep.info.run_id)}")
        browser.wait(lambda: "Best by" in browser.text())
        table = browser.js("const t = [...document.querySelectorAll('table')].find(t => t.textContent.includes('Δ to best'));"
                           "return t ? [...t.querySelectorAll('tr')].map(r => [...r.querySelectorAll('th,td')].map(c => c.textContent)) : null")
        if not table:
            failures.append(f"parent page of {label}: no side-by-side table")
        else:
            column = next(i for i, h in enumerate(table[0]) if h.startswith(BEST_BY[0]))
            values = [float(row[column].split()[0]) for row in table[1:] if row[column].strip() not in ("", "—")]
            print(f"parent table of {label}: {BEST_BY[0]} {values}")
            if values != sorted(values, reverse=True) or table[1][0] != "★":
                failures.append(f"parent page of {label}: the table is not best first in {BEST_BY[0]}: {values}")
        # on the first screen, not folded behind MLflow's "Show more": the best row is what a point there hits
        shown = browser.wait(lambda: browser.js(
            "const t = [...document.querySelectorAll('table')].find(t => t.textContent.includes('Δ to best'));"
            "const r = t && t.querySelectorAll('tr')[1]; if (!r) return false; const b = r.getBoundingClientRect();"
            "const y = b.top + b.height / 2, e = document.elementFromPoint(b.left + 10, y);"
            "return y > 0 && y < innerHeight && !!e && r.contains(e)"))
        if not shown:
            failures.append(f"parent page of {label}: the table's best row is not on the first screen (folded, or below it)")
        browser.shot(f"parent_table_{len(table or [])}")
        # the parent links its compare report, on the first screen, and the link lands on that report's page
        report_id = sweep.data.tags.get(Tag.COMPARE_REPORT)
        href = report_id and browser.js("const a = [...document.querySelectorAll('a')].find(a => (a.getAttribute('href') || '')"
                                        ".includes('/runs/' + arguments[0])); if (!a) return null; const r = a.getBoundingClientRect();"
                                        "return r.height > 0 && r.bottom <= window.innerHeight ? a.getAttribute('href') : 'below the fold'",
                                        report_id)
        print(f"parent page of {label}: compare report link {href}")
        if not href or href == "below the fold":
            failures.append(f"parent page of {label}: no compare report link on the first screen ({href or 'none'})")
        else:
            browser.open(f"{base}/{href}")
            if not browser.wait(lambda: "Reports on" in browser.text()):
                failures.append(f"parent page of {label}: its compare report link does not open a report run ({href})")
            browser.shot("compare_report")

        # Compare of its jobs: the first plot is the swept keys against the headline metric
        ids = [j.info.run_id for j in jobs_of[sweep.info.run_id]]
        browser.open(f"{base}/#/compare-runs?runs={json.dumps(ids)}&experiments={json.dumps([experiment_id])}&{WORKFLOW_QUERY}")
        titles = browser.wait(lambda: browser.js(LABEL_BOXES, ".js-plotly-plot .axis-title"), 60) or []
        browser.close_assistant()
        axes = [t[0] for t in titles]
        swept = sorted(k for k in jobs_of[sweep.info.run_id][0].data.params if k.startswith(SWEPT_PARAM_GROUP + "/"))
        print(f"compare of {label}: parallel coordinates over {axes}")
        if not swept or axes[:min(3, len(swept))] != swept[:3] or axes[-1:] != [headline]:
            failures.append(f"compare of {label}: the first plot is {axes}, not the swept keys {swept} against {headline}")
        if clash := overlapping(titles):
            failures.append(f"compare of {label}: labels overprint: {clash}")
        if cut := [t[0] for t in titles if t[1] < t[5] - 1 or t[3] > t[6] + 1]:
            failures.append(f"compare of {label}: labels cut by the plot's edge: {cut}")
        browser.shot(f"compare_{len(ids)}_jobs")

    # the repeats job: its spread over repeats charted on its page; a job's traces, one per task
    [repeats] = [r for r in runs_of(browser, base, experiment_id) if r["repeats"] == "2"] or [None]
    if repeats is None:
        failures.append("the repeats job is not in the experiment")
    else:
        browser.open(f"{base}/{run_page(experiment_id, repeats['run_id'])}")
        if not browser.wait(lambda: "6 repeats/" in browser.text()):
            failures.append("repeats job: no 6 repeats/ spread on its page")
        browser.shot("repeats_job")
        browser.open(f"{base}/{run_page(experiment_id, repeats['run_id'], 'traces')}")
        if not browser.wait(lambda: "demo-" in browser.text()):
            failures.append("repeats job: its traces tab lists no task's trace")
        browser.shot("job_traces")

    # a job's page: its metrics table leads with quality
    job = next(iter(best.values()))
    browser.open(f"{base}/{run_page(experiment_id, job)}")
    browser.wait(lambda: "Metrics (" in browser.text())
    text = browser.text()
    first = [line for line in text[text.index("Metrics ("):].splitlines() if "/" in line][:4]
    print(f"job page: first metrics {first}")
    if not first or not all(line.startswith(Section.QUALITY.value) for line in first[:2]) or first[0] != headline:
        failures.append(f"job page: its metrics begin {first}, not {headline} and quality")
    browser.shot("job_page")


def check_ui(browser: Browser, base: str, experiment_id: str, parent, jobs, failures: list[str]) -> None:
    """The first sweep's own view (the link on its parent's page), its chart view, and its parent's page."""
    names = {j.info.run_name for j in jobs}
    view = parent.data.tags.get(Tag.SWEEP_VIEW)
    if not view:
        failures.append(f"the sweep's parent has no {Tag.SWEEP_VIEW} tag")
        return
    # the sweep's view: its jobs alone, their names distinct in the width the table shows
    browser.open(f"{base}/{view}")
    rows = browser.wait(lambda: (lambda r: r if len(r) >= JOBS else None)(
        browser.js(f"return [...document.querySelectorAll(\"{NAME_CELL}\")].map(s => s.textContent)")))
    if not rows or set(rows) != names:
        failures.append(f"sweep view: rows {rows} are not the sweep's {JOBS} jobs")
    browser.close_assistant()
    shown = [t for t in browser.js(VISIBLE_TEXT, NAME_CELL) if t]
    print(f"sweep view: {len(shown)} job names visible as {shown}")
    if len(set(shown)) != JOBS:
        failures.append(f"sweep view: job names not distinct in the visible width: {shown}")
    browser.shot("sweep_view")

    # its chart view: quality first, every job plotted
    browser.js("document.querySelector(\"input[type=radio][value='CHART']\").click()")
    sections = browser.wait(lambda: [m.group(1) for m in SECTION_HEADER.finditer(browser.text())]) or []
    print(f"chart view sections: {sections}")
    if not sections or not sections[0].startswith(Section.QUALITY.value):
        failures.append(f"chart view: the first section is {sections[:1] or 'none'}, not {Section.QUALITY.value}")
    plotted_jobs = set(browser.wait(lambda: browser.js(PLOTTED_RUNS)) or []) & names
    if len(plotted_jobs) != JOBS:
        failures.append(f"sweep chart view: {len(plotted_jobs)} of {JOBS} jobs plotted: {sorted(plotted_jobs)}")
    browser.shot("chart_view")

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
    printed = build_store(work, env, failures)
    uri = f"sqlite:///{work / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("loclab-demo")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()], max_results=1000)
    sweeps = sorted((r for r in runs if r.data.tags.get(Tag.KIND) == RunKind.SWEEP), key=lambda r: r.info.start_time)
    jobs_of = {s.info.run_id: [r for r in runs if r.data.tags.get(MlflowTag.PARENT_RUN_ID) == s.info.run_id
                               and r.data.tags.get(Tag.KIND) == RunKind.JOB] for s in sweeps}
    in_experiment = [r for r in runs if r.info.experiment_id == experiment.experiment_id]
    print(f"store: {len(in_experiment)} runs in {experiment.name} ({len(sweeps)} sweeps, a repeats job), "
          f"{len(runs) - len(in_experiment)} report run(s)")
    parent, jobs = sweeps[0], jobs_of[sweeps[0].info.run_id]
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
            check_decisions(browser, base, experiment.experiment_id, sweeps, jobs_of, failures)
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

"""Scale: many revisions of a few repositories, each built from real PyPI sdists as a git history.

For each package, its newest `--releases` final releases with an sdist are downloaded and committed
in order into one git repository; each pair of consecutive releases makes a task: find, at the
older release, where the code changed that the newer one ships (gold: the old-side lines of that
release's diff of its most-changed module; the task text names the definitions its hunks are in).
The rows are SWE-bench-shaped and load through `dataset=swebench` with the histories as mirrors.

Then each locator runs on the first N tasks (tasks interleaved across repositories) in a fresh
process, subject cache and store, for each N of `--counts`: wall per task, the process's peak RSS,
the subject cache's disk (a file held by several trees counted once) against the bytes its files
add up to, and the content caches' hit rates (the job's `7 harness/process_*` metrics).

    python benchmarks/scale.py                                   # 5 packages x 21 releases: 100 tasks
    python benchmarks/scale.py --packages click,attrs --releases 6 --counts 5,10 --locators bm25
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from mlflow.tracking import MlflowClient
from packaging.version import InvalidVersion, Version

from dataset.gold import is_test_path
from experiments.job.paths import PROJECT_ROOT, default_cache_dir

PACKAGES = ("click", "packaging", "attrs", "itsdangerous", "requests")
SKIP = re.compile(r"(^|/)(tests?|docs?|examples?)/")
DEFINITION = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=bench@loclab", "-c", "user.name=loclab bench", *args],
                          check=True, capture_output=True, text=True).stdout


def _releases(package: str, count: int) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or "Available versions:" not in proc.stdout:
        raise SystemExit(f"--packages: no releases of {package!r} on the package index "
                         f"(pip index versions: {proc.stderr.strip()[-300:] or 'no versions listed'})")
    listed = proc.stdout
    versions = []
    for text in listed.split("Available versions:", 1)[1].splitlines()[0].split(","):
        try:
            version = Version(text.strip())
        except InvalidVersion:
            continue
        if not version.is_prerelease and not version.is_devrelease:
            versions.append(version)
    return [str(v) for v in sorted(versions)[-count:]]


def _sdist_tree(package: str, version: str, work: Path) -> Path | None:
    """The unpacked sdist's top folder, or None when the release has no sdist."""
    download = work / "download"
    shutil.rmtree(download, ignore_errors=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
                           "--disable-pip-version-check", "-d", str(download), f"{package}=={version}"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not list(download.glob("*.tar.gz")):
        return None
    unpacked = work / "unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(next(download.glob("*.tar.gz"))) as archive:
        archive.extractall(unpacked, filter="data")
    [top] = list(unpacked.iterdir())
    return top


def build_history(package: str, releases: int, mirrors: Path) -> list[tuple[str, str]]:
    """The package's git history, one commit per release (built once, then reused): [(version, commit)]."""
    repo = mirrors / f"bench__{package}"
    manifest = repo / ".loclab-history.json"
    if manifest.is_file():
        built = json.loads(manifest.read_text())
        if built["releases"] == releases:
            return [tuple(pair) for pair in built["history"]]
    versions = _releases(package, releases)
    shutil.rmtree(repo, ignore_errors=True)  # a history left unfinished (no record) is built again
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    history = []
    with tempfile.TemporaryDirectory() as work:
        for version in versions:
            top = _sdist_tree(package, version, Path(work))
            if top is None:
                continue
            for entry in repo.iterdir():
                if entry.name not in (".git",):
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            for entry in top.iterdir():
                shutil.move(str(entry), repo / entry.name)
            _git(repo, "add", "-A")
            _git(repo, "commit", "-q", "--allow-empty", "-m", f"{package} {version}")
            history.append((version, _git(repo, "rev-parse", "HEAD").strip()))
            print(f"  {package} {version}", file=sys.stderr, flush=True)
    manifest.write_text(json.dumps({"releases": releases, "history": history}))
    return history


def _task(package: str, older: tuple[str, str], newer: tuple[str, str], repo: Path) -> dict | None:
    """The SWE-bench-shaped row for one release step, or None when no module changed."""
    changed = {}
    for line in _git(repo, "diff", "--no-renames", "--numstat", older[1], newer[1], "--", "*.py").splitlines():
        added, removed, path = line.split("\t", 2)
        if added != "-" and not SKIP.search(path) and not is_test_path(path) and int(removed) > 0:
            changed[path] = int(added) + int(removed)
    if not changed:
        return None
    path = max(sorted(changed), key=changed.get)
    patch = _git(repo, "diff", "--no-renames", "-U3", older[1], newer[1], "--", path)
    names = []
    for header in re.findall(r"^@@ [^@]+ @@(.*)$", patch, re.M):
        found = DEFINITION.match(header)
        if found and found.group(1) not in names:
            names.append(found.group(1))
    where = ", ".join(names[:4]) if names else "module-level code"
    return {"instance_id": f"{package}-{newer[0]}", "repo": f"bench/{package}", "base_commit": older[1], "patch": patch,
            "problem_statement": f"{package} {newer[0]} changes the behaviour of {where} (released after {older[0]}).",
            "version": older[0]}


def _interleaved(by_package: list[list[dict]]) -> list[dict]:
    rows = []
    for i in range(max(map(len, by_package), default=0)):
        rows += [rows_of[i] for rows_of in by_package if i < len(rows_of)]
    return rows


def _disk(cache: Path) -> tuple[int, int]:
    """(bytes the subject trees' files add up to, bytes on disk with each linked file once)."""
    apparent, seen = 0, {}
    for dirpath, _, names in os.walk(cache / "subjects"):
        if "/tree" not in dirpath:
            continue
        for name in names:
            st = os.lstat(os.path.join(dirpath, name))
            apparent += st.st_blocks * 512
            seen[(st.st_dev, st.st_ino)] = st.st_blocks * 512
    return apparent, sum(seen.values())


def run_job(locator: str, count: int, rows: Path, mirrors: Path, work: Path) -> dict[str, float]:
    """One job in a fresh process, subject cache and store; its measures."""
    cache, store = work / "cache", work / "mlflow.db"
    env = os.environ | {"LOCLAB_CACHE_DIR": str(cache), "LOCLAB_GIT_MIRRORS": str(mirrors),
                        "MLFLOW_DISABLE_TELEMETRY": "true", "HF_HUB_OFFLINE": "1"}
    args = ["dataset=swebench", f"dataset.loader.path={rows}", f"locator={locator}", f"limit={count}",
            f"tracking.db_path={store}", f"tracking.artifact_dir={work / 'artifacts'}",
            f"paths.results_dir={work / 'results'}", "tracking.traces=false"]
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "experiments.run", *args], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = proc.communicate()[0]
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{locator} on {count} tasks failed (exit {proc.returncode}):\n{output[-3000:]}")
    client = MlflowClient(f"sqlite:///{store}")
    [run] = client.search_runs([e.experiment_id for e in client.search_experiments()],
                               filter_string="tags.`loclab.kind` = 'job'")
    metrics = {k.split("/", 1)[1]: v for k, v in run.data.metrics.items() if k.startswith(("7 harness/", "6 tasks/"))}
    apparent, on_disk = _disk(cache)
    return {"wall_s": wall, "apparent_mib": apparent / 2**20, "disk_mib": on_disk / 2**20, **metrics}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--releases", type=int, default=21, help="releases per package (tasks: one fewer)")
    parser.add_argument("--counts", default="25,100", help="task counts to run each locator on")
    parser.add_argument("--locators", default="bm25,hybrid,two_phase_retrieval", help="empty: build the tasks only")
    parser.add_argument("--mirrors", default=str(Path(default_cache_dir()) / "bench-scale"),
                        help="where the built histories are kept between runs")
    args = parser.parse_args()
    mirrors = Path(args.mirrors)
    by_package = []
    for package in args.packages.split(","):
        history = build_history(package, args.releases, mirrors)
        repo = mirrors / f"bench__{package}"
        by_package.append([t for older, newer in zip(history, history[1:]) if (t := _task(package, older, newer, repo))])
    rows = _interleaved(by_package)
    rows_file = mirrors / "rows.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} tasks over {len(by_package)} repositories ({rows_file})")
    print("| locator | tasks | wall s | s per task | localize s per task | peak RSS MiB | subject files MiB | on disk MiB "
          "| tokens hit | words hit | counts hit |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for locator in filter(None, args.locators.split(",")):
        for count in (int(c) for c in args.counts.split(",")):
            count = min(count, len(rows))
            with tempfile.TemporaryDirectory(prefix="loclab-scale-") as work:
                m = run_job(locator, count, rows_file, mirrors, Path(work))
            rate = lambda name: f"{m[name]:.3f}" if name in m else "—"  # noqa: E731
            print(f"| {locator} | {count} | {m['wall_s']:.1f} | {m['wall_s'] / count:.2f} | {m['localize_s'] / count:.2f} | "
                  f"{m['process_peak_rss_mib']:.0f} | {m['apparent_mib']:.1f} | {m['disk_mib']:.1f} | "
                  f"{rate('process_document_tokens_cache_hit_rate')} | {rate('process_words_cache_hit_rate')} | "
                  f"{rate('process_token_counts_cache_hit_rate')} |", flush=True)


if __name__ == "__main__":
    main()

"""MLflow: experiment set-up, parameter flattening, and the parent run of a multirun sweep."""

from __future__ import annotations

import atexit
import fcntl
import os
import re
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import mlflow
from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from mlflow.entities import Run, RunStatus
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig, OmegaConf

from experiments.tracking.metric_keys import metric_key
from experiments.tracking.links import UI_APP
from experiments.job.sweep_worker import mark_killed, mark_sweep_main, on_stop_signals
from experiments.tracking.vocabulary import SWEPT_PARAM_GROUP, MlflowTag, RunKind, Tag, tag_is
from locator.hashing import blake3_hex, canonical_json
from locator.redact import redact, redact_logging, redact_std_streams, redact_value
from locator.system_one.cache import DecisionCache

PARENT_RUN_ENV = "LOCLAB_MLFLOW_PARENT_RUN_ID"
SWEPT_ENV = "LOCLAB_SWEPT_KEYS"  # the keys a sweep varies, for its jobs' names (comma-separated)
# The UI opens an experiment with traces in its GenAI view, which hides the runs table; a loclab
# experiment is a table of jobs and their metrics, so it is marked as model development.
EXPERIMENT_KIND = "custom_model_development"  # the value of MlflowTag.EXPERIMENT_KIND


def ui_command(tracking: DictConfig) -> str:
    """How to look at the runs: the UI on the SQLite store (on `tracking.ui_port`, the port the
    printed links name), or the server's address."""
    uri = tracking_uri(tracking)
    if not uri.startswith("sqlite:"):
        return f"open {redact(uri)} in a browser"
    return (f"{Path(sys.executable).parent / 'mlflow'} ui --backend-store-uri {uri} --port {int(tracking.ui_port)} "
            f"--app-name {UI_APP}")


def ui_address(tracking: DictConfig) -> str:
    """Where a browser finds the runs: the server, or where `ui_command` serves the SQLite store."""
    uri = tracking_uri(tracking)
    return f"http://127.0.0.1:{int(tracking.ui_port)}" if uri.startswith("sqlite:") else redact(uri)


def sqlite_uri(path: str | Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


def tracking_uri(tracking: DictConfig) -> str:
    """`tracking.uri` (MLFLOW_TRACKING_URI) when set, else the local SQLite file."""
    return tracking.get("uri") or sqlite_uri(tracking.db_path)


@contextmanager
def _store_lock(tracking: DictConfig, local: bool) -> Iterator[None]:
    """Held while a local SQLite store is opened (and, the first time, created and migrated): two
    sweeps started together on a fresh store would migrate it at once, and one of them crash
    ("table _alembic_tmp_experiments already exists")."""
    if not local:
        yield
        return
    lock = Path(tracking.db_path).with_name(Path(tracking.db_path).name + ".lock")
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class TrackingUnreachableError(ConnectionError):
    """The tracking server does not answer; the message names the setting and what to start."""


def unreachable(uri: str) -> str | None:
    """Why the tracking server at `uri` does not answer its health check, or None (also for a local store)."""
    if not uri.startswith(("http://", "https://")):
        return None
    try:
        httpx.get(f"{uri.rstrip('/')}/health", timeout=10).raise_for_status()
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no answer'}"
    return None


def ensure_experiment(tracking: DictConfig) -> str:
    """Creates the store and the experiment if needed; call once before parallel work. A tracking
    server is checked first: MLflow itself would retry a stopped one for minutes, then fail in a traceback."""
    uri = tracking_uri(tracking)
    local = uri.startswith("sqlite:")
    if local:
        Path(tracking.db_path).parent.mkdir(parents=True, exist_ok=True)
    else:
        os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = str(tracking.http_retries)
        why = unreachable(uri)
        if why is not None:
            raise TrackingUnreachableError(
                redact(f"tracking server {uri} (tracking.uri, from MLFLOW_TRACKING_URI) does not answer ({why}): "
                       "start it (`mlflow server`, or scripts/team_server.sh start DIR), or unset MLFLOW_TRACKING_URI "
                       "to log to the local SQLite store"))
    with _store_lock(tracking, local):
        return _ensure_experiment(tracking, uri, local)


def _ensure_experiment(tracking: DictConfig, uri: str, local: bool) -> str:
    mlflow.set_tracking_uri(uri)
    client = MlflowClient()
    existing = client.get_experiment_by_name(tracking.experiment)
    if existing is not None:
        if existing.tags.get(MlflowTag.EXPERIMENT_KIND) != EXPERIMENT_KIND:
            client.set_experiment_tag(existing.experiment_id, MlflowTag.EXPERIMENT_KIND, EXPERIMENT_KIND)
        return existing.experiment_id
    artifacts = None
    if local:  # a server keeps artifacts in its own store
        Path(tracking.artifact_dir).mkdir(parents=True, exist_ok=True)
        artifacts = Path(tracking.artifact_dir).resolve().as_uri()
    try:
        return client.create_experiment(tracking.experiment, artifact_location=artifacts,
                                        tags={MlflowTag.EXPERIMENT_KIND: EXPERIMENT_KIND})
    except mlflow.exceptions.MlflowException:
        # Another process created it between our lookup and create.
        return client.get_experiment_by_name(tracking.experiment).experiment_id


def flatten(cfg: DictConfig, keys: tuple[str, ...]) -> dict[str, Any]:
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            flat[prefix] = value

    container = redact_value(OmegaConf.to_container(cfg, resolve=True))
    for key in keys:
        if key in container:
            walk(key, container[key])
    return flat


# Overrides that say where input and output are, or what the run name already says, never name a run.
_WHERE = ("hydra.", "hydra/", "dataset.", "paths.", "experiment=", "sweep=")  # where and how it ran, not what
_UNNAMED = (*_WHERE, "locator=", "dataset=")


def short_overrides(overrides: list[str]) -> list[str]:
    """Hydra's override_dirname idea, short: each `key=value` with the key cut to its last dotted
    part (`locator.reader.evidence.observation_threshold=0.6` -> `observation_threshold=0.6`),
    lengthened until no two overrides share it; sorted; output and name-giving overrides left out."""
    kept = sorted(o for o in overrides if "=" in o and not o.startswith(_UNNAMED))
    keys = [re.split(r"[./]", _key(o)) for o in kept]
    depth = [1] * len(keys)
    while True:
        labels = [".".join(k[-d:]) for k, d in zip(keys, depth)]
        clashes = {i for i, label in enumerate(labels) if labels.count(label) > 1 and depth[i] < len(keys[i])}
        if not clashes:
            return [f"{label}={o.split('=', 1)[1]}" for label, o in zip(labels, kept)]
        for i in clashes:
            depth[i] += 1


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def job_run_name(locator: str, dataset: str, overrides: list[str], swept: tuple[str, ...] = ()) -> str:
    """`two_phase@demo observation_threshold=0.6`: what the job ran. In a sweep (`swept`: the keys it
    varies) the swept values come first, then their keys, then what the siblings share, so the width
    the runs table and a chart legend show (about 20 characters) tells siblings apart:
    `0.05, 0.75 · action_threshold, observation_threshold · two_phase@demo`."""
    if not swept:
        return " ".join([f"{locator}@{dataset}", *short_overrides(overrides)])
    varying = short_overrides([o for o in overrides if _key(o) in swept and not o.startswith("locator=")])
    pairs = ([("locator", locator)] if "locator" in swept else []) + [tuple(v.split("=", 1)) for v in varying]
    rest = [o for o in overrides if _key(o) not in swept]
    shared = f"@{dataset}" if "locator" in swept else f"{locator}@{dataset}"
    keys = [] if [key for key, _ in pairs] == ["locator"] else [", ".join(key for key, _ in pairs), "·"]  # bm25 says it
    return " ".join([", ".join(value for _, value in pairs), "·", *keys, shared, *short_overrides(rest)])


def swept_params(overrides: list[str], swept: tuple[str, ...]) -> dict[str, str]:
    """A sweep job's swept values as params of their own, `0 swept/<short key>` (a config group such as
    `locator` by its name, a dotted key cut as in run names): MLflow's Compare opens on a parallel
    coordinates plot of the first three params, sorted, that differ among the runs, and a scatter of
    the first param logged; under this group, logged first, both show what the sweep varied."""
    chosen = [o for o in overrides if "=" in o and _key(o) in swept]
    groups = [o for o in chosen if o.startswith(("locator=", "dataset="))]
    pairs = [o.split("=", 1) for o in groups] + [o.split("=", 1) for o in short_overrides(chosen)]
    return {f"{SWEPT_PARAM_GROUP}/{key}": value for key, value in pairs}


def swept_keys(overrides: list[str], sweeper_params: dict[str, Any]) -> list[str]:
    """The parameters a sweep varies: command-line overrides with several values, and a preset's
    sweeper params."""
    swept = [o.split("=", 1)[0] for o in overrides
             if "=" in o and not o.startswith(("hydra.", "hydra/")) and _several(o.split("=", 1)[1])]
    return sorted(set(swept) | set(sweeper_params))


def _several(value: str) -> bool:
    return "," in value and not value.startswith(("[", "{", "'", '"')) or value.startswith(("range(", "choice(", "glob("))


def _process_gone(run: Run) -> bool:
    """A RUNNING run whose process is known to be dead: same host, pid not alive."""
    tags = run.data.tags
    if tags.get(Tag.HOST) != socket.gethostname() or not tags.get(Tag.PID, "").isdigit():
        return False
    try:
        os.kill(int(tags[Tag.PID]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _runs(client: MlflowClient, experiment_id: str, query: str) -> list[Run]:
    return client.search_runs([experiment_id], filter_string=query, max_results=5000,
                              order_by=["attributes.start_time DESC"])


def close_stale_runs(client: MlflowClient, experiment_id: str) -> list[str]:
    """Marks KILLED the experiment's RUNNING job runs (and their RUNNING task runs) whose process is
    gone: what `kill -9`, or a tracking server stopped mid-job, leaves behind. Any job started on the
    host closes them, not only a rerun of the same job. Returns their ids."""
    killed = []
    for run in _runs(client, experiment_id, f"{tag_is(Tag.KIND, RunKind.JOB)} and attributes.status = 'RUNNING'"):
        if not _process_gone(run):
            continue
        mark_killed(client, run.info.run_id, "process gone while RUNNING (killed); marked KILLED on rerun")
        killed.append(run.info.run_id)
    return killed


def finished_job(client: MlflowClient, experiment_id: str, parent_run_id: str, job_key: str) -> str | None:
    """The FINISHED run of this job under this sweep parent, if a resumed sweep already ran it."""
    done = _runs(client, experiment_id, f"{tag_is(MlflowTag.PARENT_RUN_ID, parent_run_id)} and {tag_is(Tag.JOB_KEY, job_key)} "
                                        "and attributes.status = 'FINISHED'")
    return done[0].info.run_id if done else None


def sweep_key(config: DictConfig) -> str:
    """What makes two sweeps the same sweep: the experiment, the command-line overrides and the
    preset's sweeper parameters (a rerun of a killed sweep has the same key and resumes it)."""
    params = config.hydra.sweeper.get("params")
    params = OmegaConf.to_container(params, resolve=False) if isinstance(params, DictConfig) else {}
    return blake3_hex(canonical_json({"experiment": config.tracking.experiment,
                                      "overrides": sorted(config.hydra.overrides.task), "params": params}))[:16]


class RedactSecrets(Callback):
    """Hydra writes the composed config, the overrides and its log before loclab's code runs; a
    System One URL with credentials would land there. This callback redacts every log record and
    rewrites the saved config files with URL credentials removed (`locator.redact`)."""

    def __init__(self) -> None:
        # instantiated before Hydra logs or prints the overrides, in every process that runs jobs
        redact_logging()
        redact_std_streams()

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        # a joblib worker receives this callback pickled (no __init__ ran there): install here too
        redact_logging()
        redact_std_streams()
        output = Path(HydraConfig.get().runtime.output_dir)
        saved = list((output / str(config.hydra.output_subdir)).glob("*.yaml")) if config.hydra.output_subdir else []
        if HydraConfig.get().mode.name == "MULTIRUN":
            saved.append(Path(config.hydra.sweep.dir) / "multirun.yaml")
        for path in saved:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                continue
            if redact(text) != text:
                path.write_text(redact(text), encoding="utf-8")


class SweepParentRun(Callback):
    """In the multirun parent: create the store once, open a parent run, close it with the verdict.

    A sweep whose parent was left KILLED (stopped) or RUNNING by a dead process is resumed by the
    same command: the parent is reopened, and jobs that already FINISHED under it are not run again
    (`experiments.run`), so every configuration has exactly one finished job run.
    Hydra skips on_multirun_end when a job raised, so an exit hook closes the run then; SIGTERM and
    SIGHUP are turned into a normal exit so that the hook also runs when the sweep is stopped (KILLED).
    """

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.stopped: int | None = None  # the signal that stopped the sweep
        self.handled: tuple[signal.Signals, ...] = ()
        self.experiment = ""
        self.ui_command = self.ui_address = ""
        self.swept: list[str] = []

    def _stop(self, signum: int, frame: Any) -> None:
        self.stopped = signum
        sys.exit(128 + signum)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Opens the parent run; when it cannot be recorded the sweep stops here, with one line, before
        any job starts (Hydra would turn an exception into a warning and launch the jobs anyway)."""
        try:
            self._open(config)
        except Exception as exc:  # noqa: BLE001 - any failure to record the parent stops the sweep
            where = redact(tracking_uri(config.tracking))
            print(redact(f"error: the sweep's parent run could not be recorded in {where}: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''}"[:600]) + "; no job was started",
                  file=sys.stderr, flush=True)
            raise SystemExit(2) from None

    def _open(self, config: DictConfig) -> None:
        experiment_id = ensure_experiment(config.tracking)
        if config.get("system_one") and config.system_one.cache.enabled:
            DecisionCache(config.system_one.cache.path).close()  # created once, before the jobs
        client = MlflowClient()
        key = sweep_key(config)
        overrides = list(config.hydra.overrides.task)
        params = config.hydra.sweeper.get("params")
        params = OmegaConf.to_container(params, resolve=False) if isinstance(params, DictConfig) else {}
        choices = config.hydra.runtime.choices
        preset = choices.get("experiment") if choices.get("experiment") not in (None, "null") else None
        name = " ".join([preset or "sweep", *[o for o in overrides if not o.startswith(_WHERE)]])
        tags = {Tag.KIND: RunKind.SWEEP, Tag.SWEEP_DIR: str(config.hydra.sweep.dir), Tag.SWEEP_KEY: key,
                Tag.HOST: socket.gethostname(), Tag.PID: str(os.getpid()),
                Tag.OVERRIDES: redact(" ".join(overrides))[:4000],
                Tag.SWEPT: ",".join(swept_keys(overrides, params))[:4000]}
        if preset:
            tags[Tag.PRESET] = preset
        earlier = _runs(client, experiment_id, tag_is(Tag.SWEEP_KEY, key))  # latest first
        stopped = [r for r in earlier if r.info.status == "KILLED" or (r.info.status == "RUNNING" and _process_gone(r))]
        if stopped:
            self.run_id = stopped[0].info.run_id
            client.update_run(self.run_id, status="RUNNING")
            for name, value in tags.items():
                client.set_tag(self.run_id, name, value)
            print(f"resuming stopped sweep run {self.run_id}: jobs that finished are not run again")
        else:
            if earlier:  # the same sweep, ended: a new measurement, named apart from the parents before it
                name = f"{name} #{len(earlier) + 1}"
                tags[Tag.RERUN_OF] = earlier[0].info.run_id
                print(f"the same sweep ended before as run {earlier[0].info.run_id}: this is run #{len(earlier) + 1}, "
                      "a new parent (saved results of unchanged code are reused)")
            self.run_id = client.create_run(experiment_id, run_name=redact(name)[:250], tags=tags).info.run_id
        os.environ[PARENT_RUN_ENV] = self.run_id
        mark_sweep_main()
        self.experiment, self.swept = str(config.tracking.experiment), swept_keys(overrides, params)
        self.figure_quality = str(config.tracking.sweep_figure_quality)
        os.environ[SWEPT_ENV] = ",".join(self.swept)
        self.ui_command, self.ui_address = ui_command(config.tracking), ui_address(config.tracking)
        atexit.register(self._close, aborted=True)
        self.handled = on_stop_signals(self._stop, keep_set=False)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        atexit.unregister(self._close)
        self._close(aborted=False)
        for signum in self.handled:  # after the close, which a stop may still interrupt
            signal.signal(signum, signal.SIG_DFL)
        if self.stopped is not None:
            # the handler's SystemExit can land inside a finalizer, where Python prints and drops it,
            # and the sweep then runs to its end: a stopped sweep still exits as stopped
            sys.exit(128 + self.stopped)

    def _close(self, aborted: bool) -> None:
        if self.run_id is None:
            return
        client = MlflowClient()
        experiment_id = client.get_run(self.run_id).info.experiment_id
        children = _runs(client, experiment_id, tag_is(MlflowTag.PARENT_RUN_ID, self.run_id))
        latest: dict[str, Run] = {}  # a resumed sweep holds a job's killed run and its rerun: the latest counts
        for child in children:
            latest.setdefault(child.data.tags.get(Tag.JOB_KEY, child.info.run_id), child)
        failed = [c for c in latest.values() if c.info.status != RunStatus.to_string(RunStatus.FINISHED)]
        client.log_metric(self.run_id, metric_key("sweep.jobs_total"), len(latest))
        client.log_metric(self.run_id, metric_key("sweep.jobs_failed"), len(failed))
        status = "KILLED" if self.stopped is not None else "FAILED" if aborted or failed or not latest else "FINISHED"
        jobs = [c for c in latest.values() if c.data.tags.get(Tag.KIND) == RunKind.JOB]
        params = [k for k in self.swept if all(k in j.data.params for j in jobs)]
        try:
            if jobs:  # the parent's page answers before the run says it ended
                from experiments.tracking.sweep_record import record_sweep_parent  # matplotlib: only when a sweep ends

                record_sweep_parent(client, self.run_id, jobs, self.swept, self.figure_quality)
        finally:
            client.set_terminated(self.run_id, status=status)
        if latest:
            from experiments.tracking.sweep_summary import print_sweep_summary  # rich's tables: only when a sweep ends

            print_sweep_summary(client.get_run(self.run_id), jobs, self.experiment, self.ui_command, params,
                                ui_address=self.ui_address)
        os.environ.pop(PARENT_RUN_ENV, None)
        os.environ.pop(SWEPT_ENV, None)
        self.run_id = None

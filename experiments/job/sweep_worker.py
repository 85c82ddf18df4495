"""A sweep's jobs in worker processes (the joblib launcher's loky workers) end when the sweep's main
process is gone. `kill -9` of the main process reaches none of them: 8 workers (1.8 GB) went on for
12 minutes, localizing for a sweep nobody was waiting on and holding their runs RUNNING."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

from mlflow.tracking import MlflowClient
from experiments.tracking.vocabulary import MlflowTag, Tag, tag_is

SWEEP_PID_ENV = "LOCLAB_SWEEP_MAIN_PID"
POLL_S = 1.0
# the signals a job or a sweep is stopped with from outside, each closing its runs KILLED: `kill`,
# `timeout` and schedulers send SIGTERM; a closed terminal or a dropped ssh session, SIGHUP
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)

_watching = threading.Event()
_job: dict[str, str] = {}  # the run this worker's job is recording, and the store it is in


def mark_sweep_main() -> None:
    """Called in the sweep's main process; its workers inherit the variable."""
    os.environ[SWEEP_PID_ENV] = str(os.getpid())


def working_for(run_id: str | None, tracking_uri: str | None = None) -> None:
    """The job run in progress in this process (None when it has ended), for the watcher to close."""
    _job.clear()
    if run_id is not None and tracking_uri is not None:
        _job.update(run_id=run_id, tracking_uri=tracking_uri)


def end_with_the_sweep() -> None:
    """In a worker process of a sweep: a watcher that, when the worker's parent changes (the main
    process died and the worker was re-parented), marks the job's run and its running task runs KILLED
    and ends the process. It does not interrupt the job: `_thread.interrupt_main()` sends no signal and
    is seen only when the main thread next runs Python code, and with it a job ran on to FINISHED.
    Idempotent; nothing in the sweep's main process or a single job."""
    main = os.environ.get(SWEEP_PID_ENV)
    if not main or int(main) == os.getpid() or _watching.is_set():
        return
    _watching.set()
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_S)
        job = dict(_job)
        if job:
            mark_killed(MlflowClient(tracking_uri=job["tracking_uri"]), job["run_id"],
                        "the sweep's main process died; this worker ended its job")
        os._exit(1)

    threading.Thread(target=watch, name="loclab-sweep-watch", daemon=True).start()


def on_stop_signals(handler: Callable[[int, FrameType | None], None], *,
                    keep_set: bool = True) -> tuple[signal.Signals, ...]:
    """`handler` for each of STOP_SIGNALS, on the main thread only (Python sets handlers nowhere
    else). An ignored signal stays ignored: `nohup` ignores SIGHUP so that the process runs on. With
    `keep_set`, so does any other handler set already (a job in a sweep's main process: the sweep's
    handler closes it); a sweep takes over from one (a sweep before it in the same process that
    ended without giving its handlers back). Returns the signals now handled."""
    if threading.current_thread() is not threading.main_thread():
        return ()
    handled = tuple(s for s in STOP_SIGNALS if signal.getsignal(s) is signal.SIG_DFL
                    or not keep_set and signal.getsignal(s) is not signal.SIG_IGN)
    for signum in handled:
        signal.signal(signum, handler)
    return handled


def mark_killed(client: MlflowClient, run_id: str, reason: str) -> None:
    """A job run, and its task runs still RUNNING, ended KILLED with the reason in `loclab.error`: the
    one way a run whose process is gone is closed (by this watcher, or by the next job on the host)."""
    experiment = client.get_run(run_id).info.experiment_id
    for task in client.search_runs([experiment], f"{tag_is(MlflowTag.PARENT_RUN_ID, run_id)} and attributes.status = 'RUNNING'",
                                   max_results=5000):
        client.set_terminated(task.info.run_id, status="KILLED")
    client.set_tag(run_id, Tag.ERROR, reason)
    client.set_terminated(run_id, status="KILLED")

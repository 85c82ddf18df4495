"""A sweep's jobs in worker processes (the joblib launcher's loky workers) end when the sweep's main
process is gone. `kill -9` of the main process reaches none of them: 8 workers (1.8 GB) went on for
12 minutes, localizing for a sweep nobody was waiting on and holding their runs RUNNING."""

from __future__ import annotations

import _thread
import os
import threading
import time

SWEEP_PID_ENV = "LOCLAB_SWEEP_MAIN_PID"
POLL_S = 1.0
GRACE_S = 20.0  # for the job to mark its run KILLED before the worker is ended outright

_watching = threading.Event()


def mark_sweep_main() -> None:
    """Called in the sweep's main process; its workers inherit the variable."""
    os.environ[SWEEP_PID_ENV] = str(os.getpid())


def end_with_the_sweep() -> None:
    """In a worker process of a sweep: a watcher that interrupts the job (KeyboardInterrupt, so its run
    ends KILLED) when the worker's parent changes — the main process died and the worker was
    re-parented — then ends the process. Idempotent; nothing in the sweep's main process or a single job."""
    main = os.environ.get(SWEEP_PID_ENV)
    if not main or int(main) == os.getpid() or _watching.is_set():
        return
    _watching.set()
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_S)
        _thread.interrupt_main()
        time.sleep(GRACE_S)
        os._exit(1)

    threading.Thread(target=watch, name="loclab-sweep-watch", daemon=True).start()

"""Start-up cost, measured per process: the CPU `import experiments.run` takes, which modules it
loads that a job may not need, the code identity of a job's path with its installed files' digests
cold (an empty digest cache: every compiled file hashed) and warm (kept by path, size, times and
inode), and a one-task bm25 job end to end (user+sys CPU, wall, peak RSS from `resource`), `--n`
fresh processes each.

    python benchmarks/startup.py [--n 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

IDENTITY = ("import sys, time; from experiments.job.config import compose_config; from experiments.job.production import job_code; "
            "from experiments.job import identity; cfg = compose_config(*sys.argv[1:]); t = time.perf_counter(); "
            "code = job_code(cfg, True); print(time.perf_counter() - t, identity.file_digests().read_bytes, "
            "len(code.dependencies))")
IMPORT = ("import sys, time; t = time.process_time(); import experiments.run; "
          "print(time.process_time() - t, *(m in sys.modules for m in ('bpe_openai', 'pandas', 'mlflow')))")


def _child_cpu(run) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall, after.ru_maxrss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=3)
    args = parser.parse_args()
    imports = []
    for _ in range(args.n):
        out = subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True, check=True).stdout.split()
        imports.append(float(out[0]))
    print(f"import experiments.run: {statistics.median(imports):.2f} s CPU (median of {args.n}); loaded at import: "
          f"bpe_openai {out[1]}, pandas {out[2]}, mlflow {out[3]}")
    for locator in ("locator=two_phase", "locator=embedding_retrieval"):
        with tempfile.TemporaryDirectory() as cache:
            env = os.environ | {"LOCLAB_CACHE_DIR": cache}
            runs = [subprocess.run([sys.executable, "-c", IDENTITY, locator], env=env, capture_output=True, text=True,
                                   check=True).stdout.split() for _ in range(args.n + 1)]
        cold, warm = runs[0], runs[1:]
        print(f"code identity of {locator}: cold {float(cold[0]):.2f} s ({int(cold[1]) / 1e6:.0f} MB of installed files "
              f"hashed, {cold[2]} distributions), warm {statistics.median(float(w[0]) for w in warm):.2f} s "
              f"({max(int(w[1]) for w in warm) / 1e6:.0f} MB hashed; median of {args.n})")
    with tempfile.TemporaryDirectory() as root:
        env = os.environ | {"LOCLAB_RESULTS_DIR": f"{root}/results", "LOCLAB_MLFLOW_DB": f"{root}/mlflow.db",
                            "LOCLAB_MLFLOW_ARTIFACTS": f"{root}/art", "MLFLOW_DISABLE_TELEMETRY": "true"}
        job = [sys.executable, "-m", "experiments.run", "locator=bm25", "limit=1", f"hydra.run.dir={root}/hydra"]
        subprocess.run(job, env=env, capture_output=True, check=True)  # the store and the subject, once
        jobs = []
        for _ in range(args.n):
            subprocess.run(["rm", "-rf", f"{root}/results"], check=True)
            jobs.append(_child_cpu(lambda: subprocess.run(job, env=env, capture_output=True, check=True)))
    cpu, wall = statistics.median(j[0] for j in jobs), statistics.median(j[1] for j in jobs)
    print(f"one-task bm25 job: {cpu:.2f} s CPU, {wall:.2f} s wall (medians of {args.n}); "
          f"peak RSS of a child {max(j[2] for j in jobs) / 1024:.0f} MB")


if __name__ == "__main__":
    main()

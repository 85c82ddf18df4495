"""`python -m experiments.run`: localize and score a task set, log everything to MLflow.

    python -m experiments.run                                  # demo set, two_phase, lexical System One
    python -m experiments.run -m locator=two_phase,bm25        # a sweep: one MLflow run per job
    python -m experiments.run dataset=swebench_lite_pypi locator=bm25

The job itself is `experiments.job.runner`; this module is the command.
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from experiments.job.overrides import check_or_exit
from experiments.job.paths import register_resolvers
from experiments.job.runner import Stage, run_or_exit

register_resolvers()


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    run_or_exit(cfg, Stage.LOCALIZE)


if __name__ == "__main__":
    # a typo'd setting is one line naming what it probably meant, before Hydra's traceback
    check_or_exit(sys.argv[1:])
    main()

"""`python -m experiments.score <same overrides as the run>`: re-score saved results.

Never localizes: the results are found by the run's content address (locator config, System One
identity, manifest hash); a task without a saved result is reported as failed.
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from experiments.job.paths import register_resolvers
from experiments.job.runner import Stage, run_or_exit

register_resolvers()


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    run_or_exit(cfg, Stage.SCORE)


if __name__ == "__main__":
    main()

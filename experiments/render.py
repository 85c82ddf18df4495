"""`python -m experiments.render <same overrides as the run>`: the render stage on saved results.

Renders each saved result as the agent's context pack under `render.*` (never localizes), scores
the packs beside the localization metrics and logs both, with every pack as an artifact
(`context_packs/<task>/r<repeat>.md`). Sweep the cap on one localization:

    python -m experiments.render -m locator=two_phase render.cap_tokens=4000,12000,25000
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from experiments.job.paths import register_resolvers
from experiments.job.runner import Stage, run_or_exit

register_resolvers()


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    run_or_exit(cfg, Stage.RENDER)


if __name__ == "__main__":
    main()

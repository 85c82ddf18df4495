"""The YAML under `conf/` composed outside a Hydra app: for tests, benchmarks and the analysis
commands, so that none of them restates a default (the YAML is the only source of one)."""

from __future__ import annotations

from typing import Any

from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from experiments.job.paths import CONF_DIR, register_resolvers


def compose_config(*overrides: str) -> DictConfig:
    """The root config with Hydra overrides applied, e.g. `compose_config("locator=bm25")`."""
    register_resolvers()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def build(node: str, *overrides: str) -> Any:
    """Instantiate one node of the composed config, e.g. `build("locator", "locator=two_phase")`."""
    return instantiate(OmegaConf.select(compose_config(*overrides), node))

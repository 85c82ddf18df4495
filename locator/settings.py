"""Base of every configurable component (locators, discovery, reader, schedules).

A component's fields have no defaults: the YAML under `conf/` is the only source of a default, so a
test or benchmark that builds a component directly must say every value (or compose it from the
YAML with `experiments.job.config`). Range checks live on the fields (`Field(ge=, le=)`), once.
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from pydantic import BaseModel, ConfigDict, model_validator


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    @model_validator(mode="before")
    @classmethod
    def _plain_containers(cls, data: Any) -> Any:
        """Hydra hands over OmegaConf containers; validate their plain equivalents."""
        if isinstance(data, dict):
            return {k: OmegaConf.to_container(v, resolve=True) if isinstance(v, (DictConfig, ListConfig)) else v
                    for k, v in data.items()}
        return data

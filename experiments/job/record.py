"""A job run read back from MLflow as the runner recorded it: the composed config Hydra saved, the
saved results and the decision snapshot. What `experiments.analysis.replay` and `experiments.analysis.replay_render`
rebuild a job from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from hydra.utils import instantiate
from mlflow.entities import Run
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from dataset.manifest import Manifest
from experiments.job.production import RESULT_FILE
from experiments.tracking.vocabulary import RunKind, Tag
from locator.result import LocalizationResult

# What a job run records as artifacts (experiments.run writes them, this module reads them back)
DECISIONS_ARTIFACT = "decisions.jsonl"  # the System One answers the run used (`experiments.analysis.replay`)
HYDRA_ARTIFACTS = "hydra"  # the job's .hydra/: composed config, overrides, Hydra's own config
RESULTS_ARTIFACT = "results"  # every task's saved result and trace: results/<task>/r<repeat>/


REQUIRED_SETTINGS = ("locator", "dataset", "paths", "system_one", "sampling")  # what a replay reads of a job's config


class RecordError(ValueError):
    """The run's record cannot be used as asked; the message says why."""


@dataclass(frozen=True)
class RunRecord:
    run: Run
    client: MlflowClient
    work: Path  # where the artifacts are downloaded

    @property
    def run_id(self) -> str:
        return self.run.info.run_id

    @property
    def tags(self) -> dict[str, str]:
        return self.run.data.tags

    def download(self, path: str) -> Path:
        try:
            return Path(self.client.download_artifacts(self.run_id, path, str(self.work)))
        except Exception:  # noqa: BLE001 - MLflow raises several types for a missing artifact
            raise RecordError(f"run {self.run_id} has no {path!r} artifact: it was logged before loclab recorded what "
                              "a replay needs (config, decisions); run the job again to record it") from None

    def config(self, overrides: list[str]) -> DictConfig:
        """The recorded composed config with `key=value` changes (a misspelt key is an error)."""
        artifact = f"{HYDRA_ARTIFACTS}/config.yaml"
        try:
            cfg = OmegaConf.load(self.download(artifact))
        except (yaml.YAMLError, OmegaConfBaseException, UnicodeDecodeError) as exc:
            raise RecordError(f"run {self.run_id}'s {artifact} artifact is not a readable config: "
                              f"{str(exc).splitlines()[0]}") from None
        if not isinstance(cfg, DictConfig):
            raise RecordError(f"run {self.run_id}'s {artifact} artifact is not a config mapping")
        missing = [key for key in REQUIRED_SETTINGS if key not in cfg]
        if missing:
            raise RecordError(f"run {self.run_id}'s {artifact} artifact has no {', '.join(missing)}: it is not the config "
                              "of a loclab job")
        OmegaConf.set_struct(cfg, True)
        try:
            cfg = OmegaConf.merge(cfg, OmegaConf.from_dotlist(overrides))
        except OmegaConfBaseException as exc:
            raise RecordError(f"override not in the recorded config: {exc}") from None
        OmegaConf.set_struct(cfg, False)
        return cfg

    def decisions_file(self) -> Path:
        return self.download(DECISIONS_ARTIFACT)

    def results_dir(self) -> Path:
        return self.download(RESULTS_ARTIFACT)

    def results_by_task(self) -> dict[str, list[LocalizationResult]]:
        """Every saved result by task, its repeats in order (what compare --reference and explore_export read)."""
        by_task: dict[str, list[LocalizationResult]] = {}
        found = self.results_dir().glob(f"*/r*/{RESULT_FILE}")
        for path in sorted(found, key=lambda p: (p.parent.parent.name, int(p.parent.name[1:]))):
            by_task.setdefault(path.parent.parent.name, []).append(self.stored_result(path))
        if not by_task:
            raise RecordError(f"run {self.run_id} holds no saved results")
        return by_task

    def stored_result(self, path: Path) -> LocalizationResult:
        """A result file under `results_dir()`, refused naming its artifact path when it is not one."""
        try:
            return LocalizationResult.read(path)
        except (ValueError, UnicodeDecodeError) as exc:  # pydantic's ValidationError is a ValueError
            artifact = path.relative_to(self.work) if path.is_relative_to(self.work) else path
            raise RecordError(f"run {self.run_id}'s artifact {artifact} is not a loclab result: "
                              f"{str(exc).splitlines()[0]}") from None

    def manifest(self, cfg: DictConfig) -> Manifest:
        """The run's task set, refused when its content is no longer what the run localized."""
        manifest = instantiate(cfg.dataset.loader)
        if manifest.content_hash != self.tags.get(Tag.MANIFEST_HASH):
            raise RecordError(f"the task set at {manifest.source} has hash {manifest.content_hash[:12]}, the run's was "
                              f"{str(self.tags.get(Tag.MANIFEST_HASH))[:12]}")
        return manifest


def open_record(client: MlflowClient, run: Run, work: Path) -> RunRecord:
    if run.data.tags.get(Tag.KIND) != RunKind.JOB:
        raise RecordError(f"run {run.info.run_id} is not a job run (loclab.kind={run.data.tags.get(Tag.KIND)!r})")
    return RunRecord(run, client, work)

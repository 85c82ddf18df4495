"""The blind quality review as a scoring step (`review=blind`): each saved result's context pack,
anonymized, goes to the evaluator model (`metrics.review`); its seven dimensions, overall score and
can_proceed are logged as `5 review/…` metrics beside the localization metrics. Like every score,
it re-runs on saved results and is not part of their address; the evaluator's answers go through
its System One's decision cache, keyed by its identity and the whole prompt."""

from __future__ import annotations

from hydra.utils import instantiate
from omegaconf import DictConfig

from experiments.job.identity import bound_backend
from locator.repository import RepositoryView
from locator.system_one.cache import DecisionCache
from locator.system_one.client import SystemOne
from locator.task import Task
from metrics.review import REVIEW_METRICS, ReviewParseError, ReviewSettings, parse_review, review_messages


class Reviewer:
    def __init__(self, cfg: DictConfig):
        self.settings = ReviewSettings(**{k: cfg[k] for k in ReviewSettings.model_fields})
        so = cfg.system_one
        self.backend = bound_backend(instantiate(so.backend))
        self.cache = DecisionCache(so.cache.path) if so.cache.enabled else None
        self.model = so.model

    @property
    def identity(self) -> str:
        return self.backend.identity

    def review(self, task: Task, candidate: str, repo: RepositoryView) -> tuple[dict[str, float | None], dict]:
        """The review's scores (None where the evaluator's answer was rejected) and its record: the
        evaluator's identity and text, and the review or why it was rejected (`review.json`)."""
        files = [f.path for f in repo.files()]
        system_one = SystemOne(self.backend, model=self.model, cache=self.cache)
        generation = system_one.generate(review_messages(self.settings, task.text, candidate, files),
                                         self.settings.max_tokens)
        record = {"schema_version": 1, "reviewer": self.identity, "text": generation.text,
                  "usage": generation.usage.model_dump(mode="json"), "truncated_prompt": generation.truncated_prompt}
        try:
            review = parse_review(generation.text)
        except ReviewParseError as exc:
            return dict.fromkeys(REVIEW_METRICS, None) | {"review_rejected": 1.0}, record | {"rejected": str(exc)}
        return review.scores(), record | {"review": review.model_dump(mode="json")}


def reviewer(cfg: DictConfig) -> Reviewer | None:
    review = cfg.get("review")
    return Reviewer(review) if review is not None and review.enabled else None

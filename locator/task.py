"""What a locator is asked: the task and the identity of the code it is asked about.

Nothing here may carry gold or anything derived from it (gold file hashes included):
a locator receives exactly a `Task` and a `RepositoryView`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

JsonScalar = str | int | float | bool | None


class Record(BaseModel):
    """Base of every cross-module record: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class SubjectIdentity(Record):
    """Which code a task is about: a repository at a revision."""

    repository: str = Field(min_length=1)
    revision: str = Field(min_length=1)


class Task(Record):
    schema_version: int = 1
    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    subject: SubjectIdentity
    # the languages the task is in, as its data set declares them (`rust`, `typescript`); empty: every
    # registered language present in the subject (locator/languages)
    languages: tuple[str, ...] = ()
    metadata: dict[str, JsonScalar] = Field(default_factory=dict)

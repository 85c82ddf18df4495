"""What every System One backend implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from locator.system_one.wire import Generation, GenerationRequest, Request, Response


@runtime_checkable
class Backend(Protocol):
    @property
    def identity(self) -> str:
        """Model, version and every parameter that changes answers: part of the cache key."""
        ...

    def answer(self, request: Request) -> Response: ...


@runtime_checkable
class Generating(Protocol):
    """A backend that can also write text (greedy decoding: the same request, the same text)."""

    def generate(self, request: GenerationRequest) -> Generation: ...

"""The DecisionView: what System One sees of a runtime's durable state. The state keeps every raw
observation; the view is a recency projection of them capped by characters (seed 000: a 48k
projection fixed context-limit failures without semantic summarization), never a summary."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from locator.reading.state import RawRead
from locator.settings import Settings


@dataclass(frozen=True)
class Seen:
    """One raw observation in execution order, with the file it came from."""

    path: str
    raw: RawRead


class DecisionView(Settings):
    """The newest observations whose text fits in `max_chars` (the newest one cut to fit when it
    alone is larger), shown oldest first, with how many older ones were left out."""

    max_chars: int = Field(ge=1)

    def project(self, seen: list[Seen]) -> tuple[list[Seen], int]:
        """The observations shown (oldest first, each whole or, the newest only, cut) and the number left out."""
        shown: list[Seen] = []
        room = self.max_chars
        for s in reversed(seen):
            if len(s.raw.text) > room:
                if not shown:
                    shown.append(Seen(s.path, RawRead(s.raw.span, (s.raw.text[:room],), s.raw.epoch)))
                break
            shown.append(s)
            room -= len(s.raw.text)
        return shown[::-1], len(seen) - len(shown)

    def render(self, seen: list[Seen]) -> str:
        """The projection as the text System One reads."""
        shown, omitted = self.project(seen)
        if not shown:
            return "(nothing read yet)"
        head = [f"({omitted} older observations not shown)"] if omitted else []
        return "\n".join(head + [f"--- {s.path} {s.raw.span.label()} (epoch {s.raw.epoch})\n{s.raw.text}" for s in shown])

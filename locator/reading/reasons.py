"""Why a span is evidence. Seed 000 gave every span the same template reason (the observation
question); its evaluator asked for task-specific reasons. `reasons: task` says what the span shows
for this task, from the decision that made it evidence (its Noul, the round it was read in) and from
the span's own text (which the reader was handed already): the definitions it holds and the names
of the task it shares. Nothing is read to write a reason."""

from __future__ import annotations

import re
from enum import StrEnum

from locator.reading.state import Observation
from locator.text import code_names, tokenize

_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
MAX_NAMES = 6


class ReasonKind(StrEnum):
    TEMPLATE = "template"  # seed 000: the observation question, the same for every span
    TASK = "task"  # the span's decision, the definitions it holds, the task's names it shares


def shared_names(task_text: str, content: str) -> list[str]:
    """The names the task mentions (in its code spans, then in prose) that the span contains as identifiers; for a
    task in prose (no code-shaped names there), the words they share after stemming."""
    identifiers = set(_IDENTIFIER.findall(content))
    names = [n for n in code_names(task_text, 3) if n in identifiers]
    if names:
        return names
    words = set(tokenize(content))
    return list(dict.fromkeys(w for w in tokenize(task_text) if w in words and len(w) >= 3))


def task_reason(task_text: str, path: str, observation: Observation, threshold: float) -> str:
    definitions = list(dict.fromkeys(_DEFINITION.findall(observation.content)))
    shared = shared_names(task_text, observation.content)
    parts = [f"System One rated {observation.score:.2f} (threshold {threshold:.2f}) that {path} "
             f"{observation.span.label()}, read in round {observation.round}, holds the code the task is about"]
    if definitions:
        parts.append("defines " + ", ".join(definitions[:MAX_NAMES]) + (" …" if len(definitions) > MAX_NAMES else ""))
    parts.append("shares with the task: " + ", ".join(f"`{n}`" for n in shared[:MAX_NAMES]) if shared
                 else "shares no name with the task")
    return "; ".join(parts)

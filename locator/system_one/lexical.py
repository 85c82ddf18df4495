"""Embedded lexical System One: answers any request offline and deterministically.

Relevance is the task-weighted overlap between a question's item text and the task text in
`state["task"]`, saturated BM25-style with item-length normalization, so a 3-token path and a
150-token code excerpt land on comparable probability scales. A request's questions are judged
together, as a model sees them together: a token shared by most items of a request (a package
name in every path) says little about any one of them and is damped.

Tie rule (Choice): options that share the top relevance get equal probabilities, and the choice
among them is the one whose content hash of (task, option key, option text) is greatest — so it is
deterministic and never depends on the order the options were listed in (a "stop" listed first
does not win a tie for being first).

Length reference: an item's length is normalized against `reference_tokens` (`length_reference:
fixed`), or against the mean length of the items asked together (`request_mean`, BM25's avgdl): a
long outline or excerpt then competes with the items beside it instead of with a 20-token path.

Mentions: with `mention_weight` > 0, the task's tokens that come from names it mentions as code
(`Table.write`, `_get_format_class`, a name in a traceback or a code block) weigh more than its
prose, so an excerpt or outline carrying the named code outscores one sharing only prose words.

Novelty: a request whose state carries `covered` (text System One has already established, e.g.
the evidence kept so far) asks what is new; a Noul or score item's tokens found in it count
`covered_discount` less, so an excerpt repeating what is covered scores lower than one adding to it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from enum import StrEnum
from functools import lru_cache

from locator.hashing import blake3_hex
from locator.system_one.local import score_answer, wire_usage
from locator.system_one.wire import Answer, ChoiceAnswer, NoulAnswer, Question, Request, Response
from locator.text import code_names, tokenize

_VERSION = "lexical-v3"


class LengthReference(StrEnum):
    FIXED = "fixed"  # reference_tokens
    REQUEST_MEAN = "request_mean"  # the mean token count of the request's noul/score items
# "path: a/b.py" style metadata: the labels are the locator's wording, not the item.
_FIELD_LABEL = re.compile(r"^\s*[A-Za-z_ ]+:\s", re.MULTILINE)


class MissingTaskTextError(ValueError):
    pass


@lru_cache(maxsize=256)
def _task_weights(task_text: str, mention_weight: float, mention_min_length: int) -> dict[str, float]:
    """Longer tokens are more specific; repeats in the task raise weight sublinearly; the tokens of
    names the task mentions as code (`code_names`) weigh `1 + mention_weight` times as much."""
    counts = Counter(tokenize(task_text))
    weights = {t: (0.5 + min(len(t), 12) / 8) * (1 + math.log(n)) for t, n in counts.items()}
    if mention_weight:
        for token in {t for name in code_names(task_text, mention_min_length) for t in tokenize(name)}:
            if token in weights:
                weights[token] *= 1 + mention_weight
    return weights


def item_text(question: Question) -> str:
    """The thing judged: criteria text and content. Instructions are the prompt, the same for
    every item, so they are scored only when a question has no item text at all."""
    criteria = _FIELD_LABEL.sub(" ", question.criteria) if isinstance(question.criteria, str) else ""
    item = " ".join(filter(None, [criteria, question.content]))
    return item if item.strip() else question.instructions


class LexicalBackend:
    def __init__(self, *, scale: float, length_norm: float, reference_tokens: float, length_reference: str,
                 shared_token_damping: float, covered_discount: float, temperature: float, model: str,
                 mention_weight: float, mention_min_length: int):
        if scale <= 0 or temperature <= 0 or reference_tokens <= 0:
            raise ValueError("lexical backend: scale, temperature and reference_tokens must be > 0")
        if not (0 <= length_norm <= 1 and 0 <= shared_token_damping <= 1 and 0 <= covered_discount <= 1):
            raise ValueError("lexical backend: length_norm, shared_token_damping and covered_discount must be in [0, 1]")
        self.scale = scale
        self.length_norm = length_norm
        self.reference_tokens = reference_tokens
        if length_reference not in set(LengthReference):
            raise ValueError(f"lexical backend: length_reference must be one of {[r.value for r in LengthReference]}, "
                             f"got {length_reference!r}")
        self.length_reference = LengthReference(length_reference)
        self.shared_token_damping = shared_token_damping
        self.covered_discount = covered_discount
        self.temperature = temperature
        self.model = model
        if mention_weight < 0:
            raise ValueError(f"lexical backend: mention_weight must be >= 0, got {mention_weight!r}")
        self.mention_weight = float(mention_weight)
        if mention_min_length < 1:
            raise ValueError(f"lexical backend: mention_min_length must be >= 1, got {mention_min_length!r}")
        self.mention_min_length = int(mention_min_length)

    @property
    def identity(self) -> str:
        # The fixed reference keeps lexical-v3's identity, so decisions cached before the option existed stay valid.
        reference = "" if self.length_reference is LengthReference.FIXED else f":length_reference={self.length_reference}"
        mentions = (f":mention_weight={self.mention_weight}:mention_min_length={self.mention_min_length}"
                    if self.mention_weight else "")  # likewise
        return (
            f"{_VERSION}:scale={self.scale}:length_norm={self.length_norm}:reference_tokens={self.reference_tokens}"
            f"{reference}{mentions}:shared_token_damping={self.shared_token_damping}:covered_discount={self.covered_discount}"
            f":temperature={self.temperature}"
        )

    def _relevance(self, weights: dict[str, float], tokens: frozenset[str], damp: dict[str, float],
                   reference: float | None = None) -> float:
        matched = sum(weights[t] * damp.get(t, 1.0) for t in tokens if t in weights)
        if matched == 0:
            return 0.0
        norm = 1 - self.length_norm + self.length_norm * len(tokens) / (reference or self.reference_tokens)
        return matched / (matched + self.scale * norm)

    def _damping(self, items: list[frozenset[str]]) -> dict[str, float]:
        if len(items) < 2:
            return {}
        df = Counter(t for item in items for t in item)
        n = len(items)
        return {t: 1 - self.shared_token_damping * (d - 1) / (n - 1) for t, d in df.items() if d > 1}

    def _choice(self, task_text: str, weights: dict[str, float], question: Question) -> ChoiceAnswer:
        options = question.options()
        tokens = {k: frozenset(tokenize(f"{k} {d}")) for k, d in options.items()}
        damp = self._damping(list(tokens.values()))
        raw = {k: self._relevance(weights, tokens[k], damp) / self.temperature for k in options}
        top = max(raw.values())
        exp = {k: math.exp(v - top) for k, v in raw.items()}
        total = sum(exp.values())
        best = max(options, key=lambda k: (raw[k], blake3_hex(f"{task_text}\0{k}\0{options[k]}")))
        return ChoiceAnswer(choice=best, probabilities={k: round(v / total, 6) for k, v in exp.items()})

    def answer(self, request: Request) -> Response:
        task_text = request.state.get("task")
        if not isinstance(task_text, str) or not task_text.strip():
            raise MissingTaskTextError("lexical System One needs the task text in state['task']")
        weights = _task_weights(task_text, self.mention_weight, self.mention_min_length)
        items = {k: frozenset(tokenize(item_text(q))) for k, q in request.questions.items() if q.type != "choice"}
        damp = self._damping(list(items.values()))
        reference = None
        if self.length_reference is LengthReference.REQUEST_MEAN and items:
            reference = max(sum(len(t) for t in items.values()) / len(items), 1.0)
        covered = request.state.get("covered")
        if isinstance(covered, str):
            for t in frozenset(tokenize(covered)):
                damp[t] = damp.get(t, 1.0) * (1 - self.covered_discount)
        answers: dict[str, Answer] = {}
        for key, question in request.questions.items():
            if question.type == "choice":
                answers[key] = self._choice(task_text, weights, question)
                continue
            p = round(self._relevance(weights, items[key], damp, reference), 6)
            answers[key] = NoulAnswer(noul=p) if question.type == "noul" else score_answer(p, len(question.criteria or []))
        return Response(model=self.model, answers=answers, usage=wire_usage(request, answers))

"""ScriptedBackend: a test double of the System One model (not a model), answering chosen
probabilities by substring rules (first match wins) so each policy rule can be driven exactly.
A noul question is matched on its content when it has one (an observation), else its criteria;
a choice picks the option whose description scores highest (the first listed on ties) and gives it
that score as its probability, the rest of the mass spread evenly over the other options (so a
rule of 0.2 makes a choice at probability 0.2); with `proportional`, every option's probability is
its score over the options' total, as a model's distribution would be."""

from __future__ import annotations

from locator.system_one.wire import ChoiceAnswer, NoulAnswer, Request, Response, ScoreAnswer, Usage


class ScriptedBackend:
    identity = "scripted-test-double"

    def __init__(self, rules: list[tuple[str, float]], default: float = 0.0, proportional: bool = False):
        self.rules = rules
        self.default = default
        self.proportional = proportional
        self.requests: list[Request] = []

    def _p(self, text: str) -> float:
        return next((p for needle, p in self.rules if needle in text), self.default)

    def answer(self, request: Request) -> Response:
        self.requests.append(request)
        answers = {}
        for key, q in request.questions.items():
            text = q.content or (q.criteria if isinstance(q.criteria, str) else "")
            if q.type == "choice":
                options = q.options()
                best = max(options, key=lambda k: self._p(options[k]))
                p = self._p(options[best])
                if self.proportional:
                    total = sum(self._p(text) for text in options.values())
                    probabilities = {k: self._p(text) / total for k, text in options.items()}
                else:
                    rest = (1.0 - p) / (len(options) - 1) if len(options) > 1 else 0.0
                    probabilities = {k: p if k == best else rest for k in options}
                answers[key] = ChoiceAnswer(choice=best, probabilities=probabilities)
            elif q.type == "score":
                answers[key] = ScoreAnswer(probabilities=[1.0] + [0.0] * (len(q.criteria) - 1))
            else:
                answers[key] = NoulAnswer(noul=self._p(text))
        return Response(model="scripted", answers=answers, usage=Usage(input_tokens=10, output_tokens=2))

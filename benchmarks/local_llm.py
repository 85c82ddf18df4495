"""The local model's speed on this machine: `python benchmarks/local_llm.py [--weights NAME] [--threads N]
[key=value ...]` (NAME: an option of conf/system_one/weights/, the YAML's default when not given).

Loads `system_one=local_llm` as configured (the llm extra), then measures: load time (assembly,
conversion and loading on first use, loading alone after); prompt tokens per second on one
~1,000-token prompt encoded from scratch; and one two_phase-shaped request (8 Noul questions on
one task, each with an 8-line excerpt) twice — its wall time, how many of its prompt tokens were
encoded (the rest came from the shared-prefix cache), and on the repeat, what a cached task text
saves; then generation (what agentless_style and the blind review use): a short prompt and 64 new
tokens, greedy, timed after the prompt's own encoding. A 32-token forward runs first, so the rates
are not a cold start's.
"""

from __future__ import annotations

import argparse
import time

from experiments.job.config import build
from locator.system_one.wire import GenerationRequest, Question, Request

TASK = ("click: the `--help` output ignores `max_content_width` set in the context settings; "
        "`HelpFormatter` wraps at 80 columns whatever the terminal width.")


def _excerpt(i: int) -> str:
    return "".join(f"    value_{i}_{n} = compute(ctx, width={n})  # formatting step {n}\n" for n in range(8))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", default=None, help="conf/system_one/weights option (default: the YAML's)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: the YAML's)")
    parser.add_argument("overrides", nargs="*", help="system_one.backend.KEY=VALUE")
    args = parser.parse_args()
    overrides = [f"system_one.backend.threads={args.threads}"] if args.threads else []
    if args.weights:
        overrides.append(f"system_one/weights@system_one.backend={args.weights}")
    backend = build("system_one.backend", "system_one=local_llm", *overrides,
                    *[o if o.startswith("system_one.") else f"system_one.backend.{o}" for o in args.overrides])
    started = time.perf_counter()
    tokenizer, _ = backend._load()
    print(f"model {backend.model}, threads {backend.threads}: loaded in {time.perf_counter() - started:.1f} s")

    long = " ".join(f"def helper_{n}(value): return value * {n}" for n in range(110))
    ids = tokenizer.encode(long, add_special_tokens=False)[:1000]
    backend.next_token_logits(ids[:32])  # warm-up: the first forward allocates
    backend._prefixes.clear()  # encoded from scratch
    started = time.perf_counter()
    float(backend.next_token_logits(ids)[0][0])  # read back: on a GPU the forward returns before it ends
    seconds = time.perf_counter() - started
    print(f"prompt: {len(ids)} tokens in {seconds:.2f} s = {len(ids) / seconds:.0f} tokens/s")

    questions = {f"file{i}": Question(type="noul", instructions="Does this excerpt hold the code the task is about?",
                                      criteria=f"path: src/click/module_{i}.py lines 1-8", content=_excerpt(i))
                 for i in range(8)}
    request = Request(state={"task": TASK}, model=backend.model, questions=questions)
    for label in ("cold", "warm task prefix"):
        before = dict(backend.stats)
        started = time.perf_counter()
        response = backend.answer(request)
        seconds = time.perf_counter() - started
        prompt = backend.stats["prompt_tokens"] - before["prompt_tokens"]
        encoded = backend.stats["encoded_tokens"] - before["encoded_tokens"]
        print(f"request ({label}): 8 noul in {seconds:.2f} s; {prompt} prompt tokens, {encoded} encoded "
              f"({1 - encoded / prompt:.0%} from the prefix cache); usage {response.usage.input_tokens} in, "
              f"{response.usage.cached_input_tokens} of them cached")


    messages = [{"role": "user", "content": f"{TASK}\nList five function names that might hold the cause."}]
    prompt_only = GenerationRequest(model=backend.model, messages=messages, max_tokens=1)
    started = time.perf_counter()
    backend.generate(prompt_only)
    first = time.perf_counter() - started
    started = time.perf_counter()
    generation = backend.generate(prompt_only.model_copy(update={"max_tokens": 64}))
    seconds = time.perf_counter() - started
    new = generation.usage.output_tokens
    print(f"generation: {new} new tokens after a {generation.usage.input_tokens}-token prompt in {seconds:.2f} s; "
          f"{(new - 1) / max(seconds - first, 1e-9):.1f} generated tokens/s (the prompt's {first:.2f} s taken out)")


if __name__ == "__main__":
    main()

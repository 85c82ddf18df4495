"""The locator YAML is factored into groups (`locator/evidence`, `locator/actions`, `locator/view`,
`locator/base`); every composition must equal the one the unfactored YAML gave, so saved results keep
their addresses. `composed_locators.json` holds the compositions as they were before the factoring,
written by `composed()` at that revision."""

from __future__ import annotations

import json
from pathlib import Path

from omegaconf import OmegaConf

from experiments.job.config import compose_config
from experiments.job.paths import CONF_DIR

SNAPSHOT = Path(__file__).with_name("composed_locators.json")


def _compositions() -> list[tuple[str, ...]]:
    """Every locator, every locator sub-group option under its host, every experiment preset."""
    combos = [(f"locator={p.stem}",) for p in sorted((CONF_DIR / "locator").glob("*.yaml"))]
    hosts = {"base": "locator=ast_lane", "retriever": "locator=hybrid", "actions": "locator=range_runtime",
             "view": "locator=range_runtime"}
    for sub in sorted(p for p in (CONF_DIR / "locator").iterdir() if p.is_dir()):
        package = "@locator.second" if sub.name == "retriever" else ""
        for option in sorted(sub.glob("*.yaml")):
            for host in {hosts.get(sub.name, "locator=two_phase"), *(["locator=file_runtime"] if sub.name == "discovery" else [])}:
                combos.append((host, f"locator/{sub.name}{package}={option.stem}"))
    combos += [(f"experiment={p.stem}",) for p in sorted((CONF_DIR / "experiment").glob("*.yaml"))]
    return sorted(combos)


def composed(compositions: list[tuple[str, ...]] | None = None) -> dict[str, dict]:
    out = {}
    for overrides in compositions if compositions is not None else _compositions():
        extra = ("locator.path=/data/outputs.jsonl", "locator.system=Peer") if "locator=imported" in overrides else ()
        if "locator=locagent" in overrides:
            extra = ("locator.path=/data/locagent.jsonl",)
        cfg = compose_config(*overrides, *extra)
        out[" ".join(overrides)] = OmegaConf.to_container(cfg.locator, resolve=False)
    return out


# Options added after the snapshot, with the value that leaves a composition as it was: their key is
# removed from today's composition when it holds that value (and only then).
ADDED_SINCE = {
    ("reader", "follow"): None,  # locator/follow=fixed: the seed's fixed file set
    ("reader", "evidence", "reasons"): "template",  # the seed's template reason per span
    ("reader", "evidence", "narrowing"): None,  # evidence spans as read
    ("reader", "decision_form"): "choice",  # the seed's Choice at a file's decision
    # the global schedule's all-waiting epoch: added with a deliberately new default (next_best; the rule
    # before it is when_all_wait=end), so a global job's results have a new address and are not reused
    ("reader", "schedule", "when_all_wait"): "next_best",
}
# The dense retriever's text encoder became a choice (locator/encoder): its default is the MiniLM
# batch size that was the retriever's own field.
MOVED_ENCODER = {"_target_": "locator.retrieval.minilm.MiniLMEncoder", "batch_size": 64}


# Options removed since, with the value every snapshot composition held: a task's languages come from
# its data (`Task.languages`, locator/languages), and `[".py"]` is what the Python data sets give.
REMOVED_SINCE = {"file_suffixes": [".py"]}


def _without_removed_options(node):
    if isinstance(node, dict):
        return {k: _without_removed_options(v) for k, v in node.items()
                if not (k in REMOVED_SINCE and v == REMOVED_SINCE[k])}
    return node


def _encoder_moved_back(node):
    if isinstance(node, dict):
        if node.get("encoder") == MOVED_ENCODER:
            node = {**{k: v for k, v in node.items() if k != "encoder"}, "batch_size": MOVED_ENCODER["batch_size"]}
        return {k: _encoder_moved_back(v) for k, v in node.items()}
    return node


def _without_added_options(locator: dict) -> dict:
    out = _encoder_moved_back(json.loads(json.dumps(locator)))
    for (*groups, key), off in ADDED_SINCE.items():
        node = out
        for group in groups:
            node = node.get(group) if isinstance(node, dict) else None
        if isinstance(node, dict) and key in node and node[key] == off:
            del node[key]
    return out


def test_every_locator_composition_equals_the_one_before_the_yaml_was_factored():
    before = _without_removed_options(json.loads(SNAPSHOT.read_text(encoding="utf-8")))
    now = {name: _without_added_options(c) for name, c in composed([tuple(name.split()) for name in before]).items()}
    changed = [name for name in before if now[name] != before[name]]
    assert not changed, f"compositions that changed: {changed}"


def test_an_added_option_switched_on_is_a_changed_composition():
    before = _without_removed_options(json.loads(SNAPSHOT.read_text(encoding="utf-8")))["locator=two_phase"]
    on = composed([("locator=two_phase", "locator/follow=references")])["locator=two_phase locator/follow=references"]
    assert _without_added_options(on) != before and _without_added_options(on)["reader"]["follow"] is not None

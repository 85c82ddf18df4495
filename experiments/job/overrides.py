"""A typo'd setting named with what it probably meant, before Hydra answers with a traceback.

`python -m experiments.run locator.top_filez=3` would end in Hydra's "Key 'top_filez' is not in
struct"; checked first, it is one line: `error: no setting locator.top_filez (did you mean
locator.top_files?)`. Only plain assignments of a single run are checked (a sweep's jobs may
compose different groups, and Hydra fails such a job on its own); group choices, `+key=` additions
`~key` deletions and `hydra.*` settings are Hydra's to judge.
"""

from __future__ import annotations

import difflib
import sys

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf

from experiments.job.config import compose_config
from experiments.job.paths import CONF_DIR

_MULTIRUN = ("-m", "--multirun")


def _is_group(key: str) -> bool:
    return (CONF_DIR / key.split("@")[0]).is_dir()


def unknown_setting(overrides: list[str]) -> str | None:
    """The message for the first assignment to a key the composed config does not have, or None."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return None  # a malformed override: Hydra's own message says where
    if any(o.is_sweep_override() for o in parsed):
        return None
    choices = [o.input_line for o in parsed if _is_group(o.key_or_group) or o.is_add() or o.is_delete()
               or o.is_force_add()]
    # hydra.* is Hydra's own config, not composed here
    assignments = [o for o in parsed if o.input_line not in choices and not o.key_or_group.startswith("hydra.")]
    if not assignments:
        return None
    try:
        cfg = compose_config(*choices)
    except HydraException:
        return None
    for override in assignments:
        key = override.key_or_group
        parent, _, leaf = key.rpartition(".")
        node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
        if not isinstance(node, DictConfig):
            continue  # a list index, or a parent that is itself missing: Hydra's to say
        siblings = [str(k) for k in node.keys()]  # keys() lists required (???) settings too
        if leaf in siblings:
            continue
        close = difflib.get_close_matches(leaf, siblings, n=1)
        hint = f" (did you mean {parent + '.' if parent else ''}{close[0]}?)" if close else ""
        return f"error: no setting {key}{hint}; a new key is added with +{key}=…"
    return None



def check_or_exit(argv: list[str]) -> None:
    if any(a in _MULTIRUN for a in argv):
        return
    message = unknown_setting([a for a in argv if not a.startswith("-")])
    if message:
        print(message, file=sys.stderr)
        sys.exit(2)

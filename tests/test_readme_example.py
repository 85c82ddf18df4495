"""The README's worked example of adding a locator works as printed: its module, its YAML and its
test, taken from the README's code blocks."""

from __future__ import annotations

import re
import sys
import types

import yaml
from hydra.utils import instantiate

from experiments.job.paths import PROJECT_ROOT


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (PROJECT_ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def test_the_readme_locator_its_yaml_and_its_test_run(tmp_path, monkeypatch):
    module_code, test_code = _blocks("python")[:2]
    module = types.ModuleType("locator.first_lines")
    exec(compile(module_code, "README.md: locator/first_lines.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "locator.first_lines", module)
    [config] = [yaml.safe_load(b) for b in _blocks("yaml") if "first_lines" in b]
    configured = instantiate(config)
    assert configured.name == "first_lines" and configured.lines == 40

    import tests.configs
    monkeypatch.setattr(tests.configs, "locator", lambda name: configured if name == "first_lines" else None)
    namespace: dict = {}
    exec(compile(test_code, "README.md: tests/locator/test_first_lines.py", "exec"), namespace)
    namespace["test_the_file_the_task_names_is_found"](tmp_path)

"""scripts/mutation_check.py's catalogue stays runnable: a mutation whose snippet no longer occurs
exactly once, or whose tests were renamed away, is never judged, so the mechanism it was about goes
unchecked without anyone seeing it (17 had gone stale when this test was written)."""

from __future__ import annotations

import ast
import importlib.util
import sys

import pytest

from experiments.job.paths import PROJECT_ROOT


def _catalogue():
    spec = importlib.util.spec_from_file_location("mutation_check", PROJECT_ROOT / "scripts" / "mutation_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module.MUTATIONS


MUTATIONS = _catalogue()


def _test_functions(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_mutation_names_are_unique():
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_applies_once_and_names_tests_that_exist(mutation):
    source = (PROJECT_ROOT / mutation.path).read_text(encoding="utf-8")
    assert source.count(mutation.old) == 1, f"{mutation.path}: the snippet occurs {source.count(mutation.old)} times"
    assert mutation.old != mutation.new
    for test in mutation.tests:
        path, _, name = test.partition("::")
        assert (PROJECT_ROOT / path).is_file(), test
        if name:
            assert name.split("[")[0] in _test_functions(PROJECT_ROOT / path), test

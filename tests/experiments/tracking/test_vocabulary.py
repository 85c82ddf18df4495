"""The MLflow vocabulary is defined once: no module names a tag by its text, and no word of it is dead."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from experiments.job.paths import PROJECT_ROOT
from experiments.tracking import vocabulary
from experiments.tracking.vocabulary import MlflowTag, ReportKind, RunKind, Tag, tag_is

VOCABULARY = Path(vocabulary.__file__).resolve()
# what writes and reads runs: loclab's commands and the UI check (tests may spell a tag out: they check its text)
SCANNED = [*sorted((PROJECT_ROOT / "experiments").rglob("*.py")), PROJECT_ROOT / "scripts" / "ui_check.py"]
# a tag's text: `loclab.<word>`, or one of the MLflow tags the UI reads (camelCase keys, the description)
TAG_TEXT = re.compile(r"(?:^|`)(loclab\.[a-z_0-9]+|mlflow\.(?:[a-z]+[A-Z][A-Za-z]*|note\.content)\.?)(?:`|$)")


def _code_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant in code, f-strings' literal parts included, docstrings left out (they name tags for readers)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def spelt_out_tags(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        if path.resolve() == VOCABULARY:
            continue
        for line, text in _code_strings(ast.parse(path.read_text(encoding="utf-8"))):
            if match := TAG_TEXT.search(text):
                found.append(f"{path}:{line}: {match.group(1)!r}")
    return found


def test_no_module_spells_out_a_tag():
    assert spelt_out_tags(SCANNED) == [], "name tags through experiments.tracking.vocabulary"


def test_a_spelt_out_tag_is_found(tmp_path):
    (tmp_path / "reader.py").write_text(
        '"""Reads `loclab.kind` (a docstring may name it)."""\n'
        'KIND = "loclab.kind"\n'
        'FILTER = f"tags.`mlflow.parentRunId` = \'{1}\'"\n'
        'NOTE = "mlflow.note.content"\n'
        'DB = "mlflow.db"\n'  # a file name
        'WORKFLOW = "mlflow.workflowType_v1"\n', encoding="utf-8")  # a browser's storage key
    found = spelt_out_tags([tmp_path / "reader.py"])
    assert sorted(f.split(": ", 1)[1] for f in found) == ["'loclab.kind'", "'mlflow.note.content'", "'mlflow.parentRunId'"]


def test_every_word_of_the_vocabulary_is_used():
    code = "\n".join(p.read_text(encoding="utf-8") for p in SCANNED if p.resolve() != VOCABULARY)
    unused = [f"{kind.__name__}.{member.name}" for kind in (Tag, MlflowTag, RunKind, ReportKind) for member in kind
              if not re.search(rf"\b{kind.__name__}\.{member.name}\b", code)]
    assert unused == []


def test_tag_names_are_unique_and_in_their_namespace():
    values = [t.value for t in Tag] + [t.value for t in MlflowTag]
    assert len(values) == len(set(values))
    assert all(t.value.startswith("loclab.") for t in Tag) and all(t.value.startswith("mlflow.") for t in MlflowTag)


def test_a_filter_clause_quotes_its_value():
    assert tag_is(Tag.KIND, RunKind.JOB) == "tags.`loclab.kind` = 'job'"
    assert tag_is(Tag.SWEEP_KEY, "it's") == "tags.`loclab.sweep_key` = 'it\\'s'"

from __future__ import annotations

from locator.outline import definitions, innermost, outermost
from locator.text import tokenize


def test_tokenize_splits_identifiers_and_keeps_compounds():
    tokens = tokenize("separability_matrix in astropy/modeling/separable.py and CompoundModel")
    assert {"separ", "matrix", "separability_matrix", "astropi", "model", "compound", "compoundmodel"} <= set(tokens)
    assert "py" not in tokens and "and" not in tokens


def test_tokenize_stems_so_inflections_meet():
    assert tokenize("parsing")[0] == tokenize("parses")[0]


SOURCE = '''\
import os

class Outer:
    x = 1

    @property
    def method(self):
        def inner():
            return 1
        return inner()

def top():
    pass
'''


def test_definitions_with_decorators_and_nesting():
    defs = {d.qualname: d for d in definitions(SOURCE)}
    assert set(defs) == {"Outer", "Outer.method", "Outer.method.inner", "top"}
    assert (defs["Outer.method"].start_line, defs["Outer.method"].signature_line, defs["Outer.method"].end_line) == (6, 7, 10)
    assert innermost(list(defs.values()), 9).qualname == "Outer.method.inner"
    assert outermost(list(defs.values()), 9).qualname == "Outer"
    assert innermost(list(defs.values()), 1) is None


def test_unparsable_source_has_no_definitions():
    assert definitions("def broken(:\n") == []

from __future__ import annotations

from locator.outline import definitions, innermost, outermost
from locator.text import code_names, tokenize


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
    defs = {d.qualname: d for d in definitions("pkg/outer.py", SOURCE)}
    assert set(defs) == {"Outer", "Outer.method", "Outer.method.inner", "top"}
    assert (defs["Outer.method"].start_line, defs["Outer.method"].signature_line, defs["Outer.method"].end_line) == (6, 7, 10)
    assert innermost(list(defs.values()), 9).qualname == "Outer.method.inner"
    assert outermost(list(defs.values()), 9).qualname == "Outer"
    assert innermost(list(defs.values()), 1) is None


def test_unparsable_source_keeps_the_definitions_it_can_parse_and_other_files_have_none():
    assert "fine" in [d.qualname for d in definitions("a.py", "def broken(:\n    pass\n\ndef fine():\n    pass\n")]
    assert definitions("notes.txt", "def f():\n    pass\n") == []


def test_names_are_the_words_inside_code_and_the_code_shaped_words_of_prose():
    text = ("Writing a table fails. Use `Table.write` or call get_writer() with HTTPServer and readLine; "
            "see pkg.io. The end.\n```python\nx = symbols('abc')\n```\n    indented_call(1)\n")
    names = code_names(text, 3)
    assert {"Table", "write", "get_writer", "HTTPServer", "readLine", "symbols", "abc", "indented_call", "pkg"} <= set(names)
    assert not {"Writing", "table", "fails", "The", "end", "see", "with"} & set(names)  # prose is not a name


def test_an_indented_line_is_code_but_the_prose_after_it_is_not():
    names = code_names("Example:\n    run_it(1)\nThis breaks everything\n", 3)
    assert "run_it" in names and "breaks" not in names and "everything" not in names


def test_an_outline_kept_on_disk_is_read_back_by_a_new_process_and_remade_when_unreadable(tmp_path, monkeypatch):
    from locator import outline

    source = "class A:\n    def f(self):\n        pass\n"
    try:
        outline.keep_on_disk(tmp_path / "outlines")
        parsed = definitions("a.py", source)
        [saved] = (tmp_path / "outlines").rglob("*.json")
        outline._definitions_cached.cache_clear()  # a new process
        with monkeypatch.context() as patched:
            patched.setattr(outline, "parse", lambda *_: (_ for _ in ()).throw(AssertionError("parsed again")))
            assert definitions("a.py", source) == parsed and [d.qualname for d in parsed] == ["A", "A.f"]
        saved.write_text("[[1]")
        outline._definitions_cached.cache_clear()
        assert definitions("a.py", source) == parsed  # unreadable: parsed and saved again
        assert definitions("b.rs", "fn g() {}\n")[0].qualname == "g"  # another language, its own outline
    finally:
        outline.keep_on_disk(None)


def test_a_word_tokenized_once_gives_the_tokens_of_every_occurrence_and_the_cache_is_bounded():
    from benchmarks.tokenize_words import word_by_word  # the rules applied at every occurrence, as before
    from experiments.job.paths import PROJECT_ROOT
    from locator import text as t

    corpus = [p.read_text(encoding="utf-8") for p in sorted((PROJECT_ROOT / "locator").rglob("*.py"))]
    corpus += ["HTTPServer2 __init__ parse_config_v2 ÄÖ x_y_z 12abc _a_ URLError", "  ".join(corpus[:3]) * 2]
    for text in corpus:
        assert tokenize(text) == word_by_word(text, plain=False)
        assert t.tokenize_plain(text) == word_by_word(text, plain=True)
    for cached in (t._identifier_tokens, t._plain_tokens):
        assert cached.cache_info().maxsize == t.WORD_CACHE_SIZE
        assert cached.cache_info().hits > 0
    t._identifier_tokens.cache_clear()
    tokenize(" ".join(f"word{i}x" for i in range(t.WORD_CACHE_SIZE + 10)))
    assert t._identifier_tokens.cache_info().currsize == t.WORD_CACHE_SIZE

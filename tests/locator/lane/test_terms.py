"""Bounded trace terms (seed 001): each cap, and each rejection rule."""

from __future__ import annotations

from tests.configs import locator as compose_locator

TRACE = """Traceback (most recent call last):
  File "snippet.py", line 3, in <module>
    click.IntRange(0, 5).convert(9, None, None)
  File "click/types.py", line 469, in convert
    self.fail(message, param=param, ctx=ctx)
  File "click/types.py", line 136, in fail
    raise BadParameter(message, ctx=ctx, param=param)
click.exceptions.BadParameter: 9 is not in the range 0<=x<=5."""


def _terms(**caps):
    return compose_locator("ast_lane", lane={"terms": caps}).lane.terms


def test_terms_innermost_first():
    terms = _terms().extract(TRACE)
    assert terms.ast[:3] == ("BadParameter", "fail", "convert")
    assert terms.owners == ("exceptions.BadParameter", "click.IntRange")
    assert terms.arguments[:2] == ("ctx", "param")


def test_each_cap_holds():
    many = "\n".join(f'  File "m.py", line {i}, in handler_{i}' for i in range(20))
    many += "\n" + "\n".join(f"    Owner{i}.member{i}(arg_{i}=1)" for i in range(20))
    capped = _terms(max_ast_terms=8, max_owner_terms=4, max_argument_terms=4).extract(many)
    assert (len(capped.ast), len(capped.owners), len(capped.arguments)) == (8, 4, 4)
    assert _terms(max_ast_terms=2, max_owner_terms=1, max_argument_terms=0).extract(many).arguments == ()


def test_rejections():
    noise = ("Calling setup . py fails in test_widget and Foo . bar\n"
             "    load_config(path='settings.yaml', value=None).read()\n"
             "    helpers.json\n    str(self)\n    TestWidget()\n    test_parse()\n    parse_test()\n")
    terms = _terms().extract(noise)
    assert terms.ast == ("load_config",)
    assert not set(terms.ast) & {"str", "self", "None", "TestWidget", "test_parse", "parse_test", "py", "yaml", "json"}
    assert terms.owners == ()  # "Foo . bar" (spaces) and helpers.json (a file) are not qualifiers
    assert "path" in terms.arguments and "value" not in terms.arguments

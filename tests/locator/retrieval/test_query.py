from __future__ import annotations

from locator.retrieval.query import MentionKind, build_query, mentions
from locator.text import Tokenizer

ISSUE = '''`separability_matrix` is wrong for nested models in astropy/modeling/separable.py.
Calling astropy.modeling.separable._cstack (e.g. via CompoundModel) fails:
  File "/site-packages/astropy/modeling/core.py", line 12, in evaluate
'''


def test_mentions_are_found_by_kind():
    found = {(m.kind, m.text) for m in mentions(ISSUE)}
    assert (MentionKind.FRAME, "/site-packages/astropy/modeling/core.py") in found
    assert (MentionKind.PATH, "astropy/modeling/separable.py") in found
    assert (MentionKind.DOTTED, "astropy.modeling.separable._cstack") in found
    assert (MentionKind.CODE, "separability_matrix") in found
    assert not any(m.text == "e.g" for m in mentions(ISSUE))  # prose abbreviations are not code


def test_mention_weight_repeats_mentioned_tokens_and_zero_is_the_text_alone():
    plain = build_query(ISSUE, Tokenizer.IDENTIFIER, 0)
    weighted = build_query(ISSUE, Tokenizer.IDENTIFIER, 2)
    assert weighted[: len(plain)] == plain
    extra = weighted[len(plain):]
    assert extra.count("cstack") == 2 and "separability_matrix" in extra
    assert "nest" not in extra  # prose is never weighted

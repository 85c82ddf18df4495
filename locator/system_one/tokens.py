"""Token counts with OpenAI's o200k_base BPE, offline (bpe-openai matches tiktoken exactly).

A hosted System One model has its own tokenizer; o200k_base is a fair proxy because modern BPE
vocabularies of this size tokenize code and English within a few percent of each other, and the
same counter is applied to every arm, so comparisons between locators are unaffected.
"""

from __future__ import annotations

from functools import lru_cache

import bpe_openai

ENCODING = "o200k_base"


@lru_cache(maxsize=1)
def _encoding() -> bpe_openai.Encoding:
    return bpe_openai.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text))

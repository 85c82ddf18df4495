"""Token counts are bpe-openai's o200k_base counts (tiktoken's), read from its Rust tokenizer without
its Python wrapper: the same number for every kind of text the wrapper counts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bpe_openai
import pytest

from locator.system_one.tokens import count_tokens

PROJECT_ROOT = Path(__file__).resolve().parents[3]

TEXTS = [
    "hello world",
    "def separability_matrix(transform):\n    return _separable(transform)\n",
    "    \t\n\n  trailing whitespace   \n",
    "naïve café — “quotes” and emoji 🐍🚀 and 漢字かな交じり文",
    "lone surrogate \ud800 inside, and another at the end \udfff",
    "<|endoftext|> is ordinary text here, not a special token",
    "x" * 5_000 + "\n" + "0123456789" * 900,
    "",
]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_a_count_is_the_wrappers_count(text):
    assert count_tokens(text) == len(bpe_openai.get_encoding("o200k_base").encode_ordinary(text))


def test_known_counts():
    # o200k_base, as tiktoken counts them
    assert count_tokens("hello world") == 2 and count_tokens("") == 0


def test_counting_loads_the_tokenizer_without_the_wrappers_vocabularies():
    """In a fresh process: the first count does not import `bpe_openai` (whose import builds three
    vocabularies' rank tables), and the wrapper imported afterwards shares the loaded tokenizer."""
    script = ("import sys; from locator.system_one.tokens import count_tokens; n = count_tokens('hello world'); "
              "assert 'bpe_openai' not in sys.modules, 'the wrapper was imported'; import bpe_openai; "
              "assert len(bpe_openai.get_encoding('o200k_base').encode_ordinary('hello world')) == n == 2")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]

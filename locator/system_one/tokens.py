"""Token counts with OpenAI's o200k_base BPE, offline (bpe-openai matches tiktoken exactly).

A hosted System One model has its own tokenizer; o200k_base is a fair proxy because modern BPE
vocabularies of this size tokenize code and English within a few percent of each other, and the
same counter is applied to every arm, so comparisons between locators are unaffected.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import blake3

if TYPE_CHECKING:
    import bpe_openai

ENCODING = "o200k_base"
# bpe-openai refuses one input of 1,000,000 characters or more, or one that makes over 200,000
# tokens; a character is at most 4 tokens (its UTF-8 bytes), so a piece of 40,000 characters never
# reaches either limit, whatever the text (a 450 KB array dump is ~1 token per character).
_PIECE_CHARS = 40_000
# Counts of texts already counted, by the text's BLAKE3: a job counts the same text at several stages
# (a pack when rendered and when scored, a response's JSON for two metrics, a request's repeated
# parts). A count is a pure function of the text, so the cache changes time, never a number.
COUNT_CACHE_SIZE = 65_536
_COUNTED: OrderedDict[bytes, int] = OrderedDict()
_COUNTED_LOCK = threading.Lock()
_LOOKUPS = [0, 0]  # texts whose count was cached, counted afresh


def count_lookups() -> tuple[int, int]:
    """(hits, misses) of the count cache in this process."""
    return _LOOKUPS[0], _LOOKUPS[1]


BINDINGS = "bpe_openai._bindings"


@lru_cache(maxsize=1)
def _tokenizer() -> "bpe_openai._bindings.PyTokenizer":
    """bpe-openai's Rust tokenizer, loaded on the first count (0.04 s of CPU), not at import.

    Its Python package is not imported: `bpe_openai/__init__` builds Python rank tables of three
    vocabularies at import (0.5-1.2 s of CPU), which a count never reads, so the extension module is
    loaded from its file and registered under its own name (a later `import bpe_openai` finds it
    there). The wrapper's `encode_ordinary` is this tokenizer's `encode` after the same surrogate
    repair (`_repaired`), so the counts are identical (tests/locator/system_one/test_tokens.py)."""
    module = sys.modules.get(BINDINGS)
    if module is None:
        package = importlib.util.find_spec("bpe_openai")
        if package is None or not package.submodule_search_locations:
            raise ImportError("bpe-openai is not installed (a dependency of loclab): bash scripts/setup.sh")
        [path] = Path(next(iter(package.submodule_search_locations))).glob("_bindings.*so")
        loader = importlib.machinery.ExtensionFileLoader(BINDINGS, str(path))
        module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(BINDINGS, path, loader=loader))
        loader.exec_module(module)
        sys.modules[BINDINGS] = module
    return module.tokenizer_for_encoding(ENCODING)


def _repaired(text: str) -> str:
    """What bpe-openai's wrapper counts for text with lone surrogates: each one as U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def count_tokens(text: str) -> int:
    """Exact below 40,000 characters; longer text is counted in pieces cut after a newline (or a
    space), where a token can only split if it spans the cut, so the count stays within a token
    per piece of exact. A text is counted once per process (a bounded cache by its content)."""
    key = blake3.blake3(text.encode("utf-8", "surrogatepass")).digest()
    with _COUNTED_LOCK:
        if key in _COUNTED:
            _COUNTED.move_to_end(key)
            _LOOKUPS[0] += 1
            return _COUNTED[key]
    counted = _count(text)
    with _COUNTED_LOCK:
        _LOOKUPS[1] += 1
        _COUNTED[key] = counted
        while len(_COUNTED) > COUNT_CACHE_SIZE:
            _COUNTED.popitem(last=False)
    return counted


def _count(text: str) -> int:
    total, start = 0, 0
    while len(text) - start > _PIECE_CHARS:
        end = start + _PIECE_CHARS
        cut = text.rfind("\n", start, end)
        if cut <= start:
            cut = text.rfind(" ", start, end)
        cut = cut + 1 if cut > start else end
        total += _tokenizer().count(_repaired(text[start:cut]))
        start = cut
    return total + _tokenizer().count(_repaired(text[start:]))

"""Tokenizers shared by every lexical component (BM25, the lexical System One).

Code and issue text name the same thing differently (`separability_matrix`, `SeparabilityMatrix`,
`modeling/separable.py`). Two tokenizers, named for what they do:

- `identifier` (loclab's default): identifiers split into stemmed parts, stopwords and 1-character
  parts dropped, and the whole compound kept as one more token, which rewards an exact identifier
  match. Stronger than the SWE-bench BM25 baseline.
- `plain`: alphanumeric runs split at CamelCase and underscores, lowercased, nothing stemmed or
  dropped — the SWE-bench-style baseline's tokens, so published BM25 rows can be matched.

`code_names` picks out the names a task mentions as code (entity retrieval, the lexical System
One's `mention_weight`).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from enum import StrEnum
from functools import lru_cache

import Stemmer

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")  # a word never spans a line
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each either else few for from
    further had has have having he her here hers him his how i if in into is it its itself just me
    more most my no nor not now of off on once only or other our out over own same she should so some
    such than that the their them then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    py pyi self cls def return none true false import class elif args kwargs lambda pass raise
    try except finally yield async await assert del global nonlocal
    """.split()
)


class Tokenizer(StrEnum):
    IDENTIFIER = "identifier"
    PLAIN = "plain"


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return sys.intern(_stemmer().stemWord(word))


# Words whose tokens are kept, per tokenizer: a word is tokenized once, not at every occurrence (on 10
# SWE-bench Lite instances tokenizing was 47.5 s of bm25's 89 s, over 4.96 M words). Bounded, least
# recently used first out: 32–57 MiB when full (benchmarks/tokenize_words.py).
WORD_CACHE_SIZE = 131072


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _identifier_tokens(word: str) -> tuple[str, ...]:
    parts = [p.lower() for p in _PART.findall(word)]
    kept = [_stem(p) for p in parts if len(p) > 1 and p not in STOPWORDS]
    if len(parts) > 1 and len(kept) > 1:
        kept.append(sys.intern(word.lower().strip("_")))
    return tuple(kept)


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _plain_tokens(word: str) -> tuple[str, ...]:
    return tuple(sys.intern(p.lower()) for p in _PART.findall(word))


def word_lookups() -> tuple[int, int]:
    """(hits, misses) of the word caches (both tokenizers) in this process."""
    infos = (_identifier_tokens.cache_info(), _plain_tokens.cache_info())
    return sum(i.hits for i in infos), sum(i.misses for i in infos)


# How each tokenizer turns one word into tokens (cached per word); the one place a tokenizer is defined.
WORD_TOKENS: dict[Tokenizer, Callable[[str], tuple[str, ...]]] = {
    Tokenizer.IDENTIFIER: _identifier_tokens,
    Tokenizer.PLAIN: _plain_tokens,
}


def tokens(text: str, tokenizer: Tokenizer) -> list[str]:
    """The tokenizer's tokens of `text`, in order."""
    word_tokens = WORD_TOKENS[tokenizer]
    found: list[str] = []
    for word in WORD.findall(text):
        found.extend(word_tokens(word))
    return found


def tokenize(text: str) -> list[str]:
    """`identifier`: stemmed identifier parts plus whole compound identifiers, stopwords and 1-char parts dropped."""
    return tokens(text, Tokenizer.IDENTIFIER)


def tokenize_plain(text: str) -> list[str]:
    """`plain`: every alphanumeric/CamelCase part, lowercased; no stemming, stopwords or compounds."""
    return tokens(text, Tokenizer.PLAIN)


_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
# where every word is code: fenced blocks, inline code, doctest and indented lines
_CODE_SPAN = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`|^(?:>>>|\.\.\.|    |\t)[^\n]*", re.DOTALL | re.MULTILINE)
_DOTTED_AFTER, _DOTTED_BEFORE = re.compile(r"\.[A-Za-z_]"), re.compile(r"\w\.")  # a.b, not a sentence's end
_CODE_SHAPED = re.compile(r"_|[a-z][A-Z]|[A-Z]{2,}[a-z]")  # snake_case, camelCase, HTTPServer


def code_names(text: str, min_length: int) -> Counter[str]:
    """The names a task mentions, with their counts: every word inside code (fenced, inline,
    doctest or indented), and in prose the words shaped like code (snake_case, CamelCase, a call
    `name(`, a part of a dotted name). Prose words ("format", "table") are not taken for names."""
    names: Counter[str] = Counter()
    prose = _CODE_SPAN.sub(lambda m: names.update(_words(m.group(0), min_length)) or " ", text)
    for match in _NAME.finditer(prose):
        word, after = match.group(0), prose[match.end() : match.end() + 2]
        before = prose[max(match.start() - 2, 0) : match.start()]
        dotted = _DOTTED_AFTER.match(after) or _DOTTED_BEFORE.fullmatch(before)
        if len(word) >= min_length and (_CODE_SHAPED.search(word) or after.startswith("(") or dotted):
            names[word] += 1
    return names


def _words(code: str, min_length: int) -> list[str]:
    return [w for w in _NAME.findall(code) if len(w) >= min_length]

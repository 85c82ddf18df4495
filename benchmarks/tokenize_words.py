"""What tokenizing each distinct word once buys: every `.py` file under the subject trees a task set
unpacked (the SWE-bench Lite PyPI subset's 39 trees by default, once `experiments.run` fetched them),
tokenized twice with each tokenizer — word by word as before (every occurrence afresh) and through
the bounded word cache — with the tokens compared and the cache's memory measured.

    python benchmarks/tokenize_words.py                        # the subjects under the loclab cache
    python benchmarks/tokenize_words.py --root .venv/lib       # any tree of Python files
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

from experiments.job.paths import default_cache_dir
from locator import text


def word_by_word(source: str, plain: bool) -> list[str]:
    """The tokenizers before the word cache: the same rules, applied at every occurrence."""
    tokens: list[str] = []
    for word in text.WORD.findall(source):
        parts = [p.lower() for p in text._PART.findall(word)]
        if plain:
            tokens.extend(sys.intern(p) for p in parts)
            continue
        kept = [text._stem(p) for p in parts if len(p) > 1 and p not in text.STOPWORDS]
        tokens.extend(kept)
        if len(parts) > 1 and len(kept) > 1:
            tokens.append(word.lower().strip("_"))
    return tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(default_cache_dir()) / "subjects")
    args = parser.parse_args()
    corpus = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(args.root.rglob("*.py")) if p.is_file()]
    words = sum(len(text.WORD.findall(s)) for s in corpus)
    print(f"{len(corpus):,} files, {sum(map(len, corpus)) / 2**20:.0f} MiB, {words:,} words under {args.root}")
    for name, cached, plain in (("identifier", text.tokenize, False), ("plain", text.tokenize_plain, True)):
        start = time.process_time()
        before = [word_by_word(s, plain) for s in corpus]
        per_occurrence = time.process_time() - start
        start = time.process_time()
        after = [cached(s) for s in corpus]
        per_word = time.process_time() - start
        if before != after:
            raise SystemExit(f"{name}: the word cache changed the tokens")
        print(f"{name:10}  every occurrence {per_occurrence:6.2f} s CPU   each word once {per_word:6.2f} s "
              f"({per_word / per_occurrence:.2f}x), identical tokens")
    text._identifier_tokens.cache_clear()
    tracemalloc.start()
    for source in corpus:
        text.tokenize(source)
    held, _ = tracemalloc.get_traced_memory()
    info = text._identifier_tokens.cache_info()
    print(f"identifier word cache after the corpus: {info.currsize:,} of {info.maxsize:,} words, "
          f"{held / 2**20:.1f} MiB held (hits {info.hits:,}, misses {info.misses:,})")


if __name__ == "__main__":
    main()

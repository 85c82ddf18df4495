"""The key/value caches of the last few prompts a model encoded, so that a prompt encodes only what
follows the longest prefix any of them shares with it.

One slot sufficed while consecutive prompts extended one another. A choice asked in two orders
(`choice_orders: 2`) alternates two listings of the same options: with one slot each listing evicts the
other, so the next round's listing, mostly the same-order listing of the round before with options
changed after a shared head, re-encodes everything after the task text. With a slot per listing each
reuses its own predecessor. `slots: 1` is the single cache exactly.

A cache is a `transformers` cache (anything that `copy.deepcopy` forks and whose `crop(-n)` drops its last
n tokens, the only form transformers 5 accepts); the
pool is not thread-safe: the backend encodes one prompt at a time under its lock.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class PrefixCache:
    def __init__(self, slots: int, new_cache: Callable[[], Any]):
        if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
            raise ValueError(f"system_one.backend.prefix_cache_slots must be >= 1, got {slots!r}")
        self.slots = slots
        self._new = new_cache
        self._entries: list[tuple[list[int], Any]] = []  # (prompt tokens, their cache), least recently used first

    def take(self, ids: Sequence[int]) -> tuple[int, Any]:
        """A cache holding the first `shared` tokens of `ids` (0: a new one), out of the pool until `put`.
        The slot with the longest common prefix is used; among equals the least recently used, the one
        eviction would take anyway. It is forked, not cut, while the pool has a free slot, so a prompt
        that shares more of it later still finds it."""
        best, shared = -1, 0
        for i, (cached_ids, _) in enumerate(self._entries):
            n = common_prefix(cached_ids, ids)
            if n > shared:
                best, shared = i, n
        shared = min(shared, len(ids) - 1)  # at least the last token is encoded: its logits are the answer
        if best < 0 or shared == 0:
            if len(self._entries) >= self.slots:
                self._entries.pop(0)
            return 0, self._new()
        cached_ids, cache = self._entries[best]
        if shared == len(cached_ids):  # the prompt extends it: it becomes this prompt's
            self._entries.pop(best)
            return shared, cache
        if len(self._entries) >= self.slots:
            self._entries.pop(0)  # the least recently used goes; if that was the best, it is cut, not copied
            if best == 0:
                cache.crop(shared - len(cached_ids))
                return shared, cache
        cache = copy.deepcopy(cache)
        cache.crop(shared - len(cached_ids))
        return shared, cache

    def clear(self) -> None:
        self._entries.clear()

    def put(self, ids: Sequence[int], cache: Any) -> None:
        """`cache`, from `take`, now holds `ids`: the most recently used slot (`take` made its room)."""
        self._entries.append((list(ids), cache))

"""The prefix-cache pool of local_llm, on stand-in caches that record the tokens they hold: what each
prompt would encode under one slot and under two, and that a kept prefix is never cut under a
prompt that shares more of it."""

from __future__ import annotations

import pytest

from locator.system_one.prefix_cache import PrefixCache


class Held:
    """A stand-in key/value cache: the tokens it holds (what `crop` and `copy.deepcopy` act on)."""

    copies = 0  # forks made (copy.deepcopy), over every instance

    def __init__(self):
        self.tokens: list[int] = []

    def __deepcopy__(self, memo) -> "Held":
        Held.copies += 1
        fork = Held()
        fork.tokens = list(self.tokens)
        return fork

    def crop(self, drop: int) -> None:
        if drop >= 0:  # as transformers 5's DynamicCache: only a negative count of tokens to drop
            raise ValueError(f"crop({drop})")
        del self.tokens[drop:]


def _encode(pool: PrefixCache, ids: list[int]) -> int:
    """What the backend does per prompt: take a cache, encode the rest into it, put it back. The
    tokens encoded."""
    shared, cache = pool.take(ids)
    assert cache.tokens == ids[:shared]  # the cache holds exactly the shared prefix
    cache.tokens.extend(ids[shared:])
    pool.put(ids, cache)
    return len(ids) - shared


TASK = list(range(100))  # system prompt and task text
FORWARD, REVERSED = [1000, 1001, 1002, 1003], [1003, 1002, 1001, 1000]  # a choice's options listed both ways


def _rounds(slots: int) -> list[int]:
    """Two rounds of one choice asked in both orders; the second round lists one more option (the
    forward listing gains it at its end, the reversed at its start)."""
    pool = PrefixCache(slots, Held)
    first = [_encode(pool, TASK + FORWARD), _encode(pool, TASK + REVERSED)]
    return first + [_encode(pool, TASK + FORWARD + [1004]), _encode(pool, TASK + [1004] + REVERSED)]


def test_one_slot_lets_the_two_listings_of_a_choice_evict_each_other():
    assert _rounds(1) == [104, 4, 5, 5]  # the second round's forward listing re-encodes its options


def test_a_slot_per_listing_reuses_each_listing_from_the_round_before():
    assert _rounds(2) == [104, 4, 1, 5]  # forward: only the new option; reversed: it changed at its start


def test_a_prompt_that_diverges_forks_the_kept_prefix_while_a_slot_is_free():
    pool = PrefixCache(2, Held)
    _encode(pool, TASK + [1, 2, 3])
    _encode(pool, TASK + [9])  # shares the task only: forks, the first prompt's cache stays whole
    assert _encode(pool, TASK + [1, 2, 3, 4]) == 1


def test_the_least_recently_used_slot_is_evicted_and_cut_in_place():
    one, two, three = ([n] * 4 for n in (1, 2, 3))
    pool = PrefixCache(2, Held)
    _encode(pool, TASK + one)
    _encode(pool, TASK + two)
    copies = Held.copies
    _encode(pool, TASK + three)  # full: the least recently used (one) is cut to the task and reused
    assert Held.copies == copies  # in place: the pool is full, so nothing is forked
    assert _encode(pool, TASK + two) == 1  # two is still held: only its last token is encoded again
    assert _encode(pool, TASK + one) == 4  # one is gone: everything after the task


def test_an_unrelated_prompt_starts_a_new_cache_and_the_last_token_is_always_encoded():
    pool = PrefixCache(1, Held)
    _encode(pool, TASK)
    assert _encode(pool, TASK) == 1  # its logits are the answer
    assert _encode(pool, [7, 8, 9]) == 3


def test_fewer_than_one_slot_is_refused_naming_the_setting():
    with pytest.raises(ValueError, match="prefix_cache_slots"):
        PrefixCache(0, Held)

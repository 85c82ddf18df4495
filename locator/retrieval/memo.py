"""A bounded, thread-safe memo for content-keyed index work (tasks of one job may run concurrently)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class LRU:
    """Least recently used out first; counts its hits and misses (a job logs the rate)."""

    def __init__(self, size: int):
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._size = size
        self.hits = self.misses = 0  # lookups answered from the memo, and made afresh

    def get(self, key, make: Callable):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
        value = make()
        with self._lock:
            self.misses += 1
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
